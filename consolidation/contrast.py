"""Pairs of skills about one thing done to two different objects ("troca de geladeira" and
"troca de fogão", "troca de óleo" and "troca de produto"), pure: a meaning model scores them
alike (the action is the meaning; the object is one word), and they must never be merged.

A pair contrasts when their names share a word and each name has a word the other skill's
whole text (name, description, body) never uses, and those words are rarer in the org than
every word the names share: the shared word is the general one (the action), the words that
differ are specific (the objects). Words are the lexical backend's (folded, stop words out,
stemmed; at least 3 letters); a word's rarity is how many of the compared skills use it.
Names written in other words entirely ("trocar-produto" beside "devolucao-item-avariado")
share no name word and never contrast; neither do two names whose differing word is the
general one ("piano-entrega", "piano-estoque": the object is what they share).

Measured on bench/consolidation.py (candidates: pairs the embedded model links): the
generated corpus' seeds 1-4, none of 420 same-pile pairs and about a fifth of the other pairs
contrast; the hand-written corpus' tuning half, 1 of 62 same-pile pairs (held out: 4 of 66).
Cost: O(characters) to read, then only pairs that share a name word are compared.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from consolidation.similarity import SkillText, name_words, words
from consolidation.stemmer import stem

MIN_CONTRAST_CHARS = 3


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if len(w) >= MIN_CONTRAST_CHARS}


def contrasting_pairs(skills: Sequence[SkillText]) -> set[tuple[int, int]]:
    """(i, j), i < j, of the pairs that contrast (see above)."""
    names = [
        {stem(w) for w in name_words(s.name, set()) if len(w) >= MIN_CONTRAST_CHARS} for s in skills
    ]
    full = [names[i] | _stems(s.description) | _stems(s.body) for i, s in enumerate(skills)]
    df: Counter[str] = Counter(w for found in full for w in found)
    holders: defaultdict[str, list[int]] = defaultdict(list)
    for i, found in enumerate(names):
        for w in found:
            holders[w].append(i)
    out: set[tuple[int, int]] = set()
    for i, found in enumerate(names):
        others = {j for w in found for j in holders[w] if j > i}
        for j in sorted(others):
            if _contrast(names[i], names[j], full[i], full[j], df):
                out.add((i, j))
    return out


def _contrast(
    name_a: set[str], name_b: set[str], full_a: set[str], full_b: set[str], df: Counter[str]
) -> bool:
    shared = name_a & name_b
    only_a, only_b = name_a - full_b, name_b - full_a
    if not shared or not only_a or not only_b:
        return False
    return max(df[w] for w in only_a | only_b) < min(df[w] for w in shared)
