"""Keyword matching of an inbound message against installed skills (pure: no I/O, no clock).

Rules, the contract the turn and the tests rely on:

- A skill is *matched* (its body is injected) when one of its ``any_keywords`` occurs in the
  text. It is a *probe* (only recorded) when one of its ``probe_keywords`` occurs and none of
  its ``any_keywords`` does.
- Keywords and text are normalized alike: casefold, Unicode NFKD, combining marks dropped.
  So ``Não``/``nao``, ``preço``/``PRECO`` and ``2ª``/``2a`` compare equal.
- Both are split into words (``\\w+`` after normalization). A keyword matches whole words
  only: ``cep`` never matches inside ``exceção``, ``frete`` never matches ``fretado``. A
  multi-word keyword matches its words consecutively, in order, with any run of non-word
  characters between them (``segunda via`` matches ``segunda-via`` and ``Segunda   via``).
  A keyword with no word characters (``""``, ``"!!"``) never matches.
- Plurals: each keyword word also matches its simple Portuguese plural, derived from the
  normalized word: ``-ao`` -> ``-oes``/``-aes``/``-aos`` (cartão -> cartões, pão -> pães,
  mão -> mãos); ``-il`` -> ``-is``/``-eis`` (barril -> barris, fácil -> fáceis); other ``-l``
  -> ``-is`` (papel -> papéis); ``-m`` -> ``-ns`` (item -> itens); ``-r``/``-z``/``-s`` ->
  ``+es`` (valor -> valores, mês -> meses); ``-x`` and words ending in a digit get none (pix,
  tórax, 24); anything else ``+s`` (frete -> fretes, preço -> preços, cep -> ceps). It is one
  way: the keyword ``boletos`` does not match ``boleto``; write the singular. Irregular
  plurals (mal -> males) are not derived; list them as keywords when they matter.
- Order: ``matched`` by number of distinct ``any_keywords`` hits (after normalization)
  descending, then name ascending (code point order); ``max_matched`` keeps the first N and
  lists the rest, in the same order, in ``capped``. ``probes`` sorted by name. A skill name
  that appears twice in the input is taken from its first occurrence only.

Speed: the keyword index maps each phrase's first word to its phrases; plurals are resolved
on the message side (each message word also stands for its possible singulars), so building
the index is one pass over the keywords. It depends only on the skills' names and matchers,
so ``match_skills`` keeps it in a small LRU keyed by exactly that content; a call then costs
one normalization and a few dict lookups per word of the message.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from skills.models import LoadedSkill, SkillMatcher

# A phrase is a keyword as its normalized words, e.g. ("segunda", "via").
Phrase = tuple[str, ...]
# What the compiled index depends on: each input skill's (name, matcher), in input order.
_ContentKey = tuple[tuple[str, SkillMatcher], ...]

_WORD_RE = re.compile(r"\w+")
# Last letters whose plural is "+es"; and those whose plural is not a plain "+s".
_ES_PLURAL_ENDINGS = frozenset("rzs")
_NOT_PLAIN_S_ENDINGS = frozenset("xlmrzs")
# Distinct skill-sets (orgs) whose compiled index stays warm in this process.
_INDEX_CACHE_SIZE = 16
# Distinct matchers whose normalized phrases stay cached (platform skills repeat across orgs).
_MATCHER_CACHE_SIZE = 8192


@dataclass(frozen=True)
class MatchResult:
    """Skills whose bodies go into this turn, probes to record, and matches cut by the cap."""

    matched: list[LoadedSkill]
    probes: list[str]
    capped: list[str] = field(default_factory=list)


def normalize_text(text: str) -> str:
    """Casefold, NFKD and drop combining marks: the form both keywords and messages take."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    if decomposed.isascii():
        return decomposed
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def plural_forms(word: str) -> tuple[str, ...]:
    """Simple Portuguese plurals of a normalized word (see the module docstring)."""
    last = word[-1:]
    if not last.isalpha() or last == "x":
        return ()
    if word.endswith("ao"):
        stem = word[:-2]
        return (stem + "oes", stem + "aes", stem + "aos")
    if word.endswith("il"):
        return (word[:-1] + "s", word[:-2] + "eis")
    if last == "l":
        return (word[:-1] + "is",)
    if last == "m":
        return (word[:-1] + "ns",)
    if last in _ES_PLURAL_ENDINGS:
        return (word + "es",)
    return (word + "s",)


def singular_forms(word: str) -> tuple[str, ...]:
    """Every `s` with `word in plural_forms(s)`: the exact inverse of `plural_forms`.

    Message words are mapped back to their possible singulars at match time, so the index
    holds each keyword word once (no plural expansion) and stays cheap to build.
    """
    if not word.endswith("s"):
        return ()
    found: list[str] = []
    if word.endswith(("oes", "aes", "aos")):
        found.append(word[:-3] + "ao")  # cartoes, paes, maos
    if word.endswith("is"):
        found.append(word[:-1] + "l")  # barris -> barril
        if word[-3:-2] != "i":  # "-il" words never take "-l" -> "-is"
            found.append(word[:-2] + "l")  # papeis -> papel
    if word.endswith("eis"):
        found.append(word[:-3] + "il")  # faceis -> facil
    if word.endswith("ns"):
        found.append(word[:-2] + "m")  # itens -> item
    if word.endswith("es") and word[-3:-2] in _ES_PLURAL_ENDINGS:
        found.append(word[:-2])  # valores, luzes, meses
    stem = word[:-1]
    last = stem[-1:]
    if last.isalpha() and last not in _NOT_PLAIN_S_ENDINGS and not stem.endswith("ao"):
        found.append(stem)  # fretes, ceps
    return tuple(found)


def _phrases(keywords: Sequence[str]) -> tuple[Phrase, ...]:
    """Normalized, deduplicated phrases of keywords, in first-seen order; empty ones dropped."""
    phrases: dict[Phrase, None] = {}  # a dict keeps first-seen order, unlike a set
    for keyword in keywords:
        phrase = tuple(_WORD_RE.findall(normalize_text(keyword)))
        if phrase:
            phrases[phrase] = None
    return tuple(phrases)


@lru_cache(maxsize=_MATCHER_CACHE_SIZE)
def _matcher_phrases(matcher: SkillMatcher) -> tuple[tuple[Phrase, ...], tuple[Phrase, ...]]:
    return _phrases(matcher.any_keywords), _phrases(matcher.probe_keywords)


def _phrase_owners(key: _ContentKey) -> tuple[dict[Phrase, list[int]], dict[Phrase, list[int]]]:
    """Phrase -> positions of the skills listing it in any_keywords, and in probe_keywords."""
    hard: dict[Phrase, list[int]] = {}
    probe: dict[Phrase, list[int]] = {}
    seen: set[str] = set()
    for position, (name, matcher) in enumerate(key):
        if name in seen:  # first occurrence wins
            continue
        seen.add(name)
        any_phrases, probe_phrases = _matcher_phrases(matcher)
        for phrase in any_phrases:
            hard.setdefault(phrase, []).append(position)
        for phrase in probe_phrases:
            probe.setdefault(phrase, []).append(position)
    return hard, probe


class _KeywordIndex:
    """Keyword phrases of a list of skills, addressed by each skill's position in that list.

    It depends only on the (name, matcher) pairs, so one index serves any list with the same
    pairs in the same order, whatever their bodies or version ids.
    """

    __slots__ = ("by_pair", "hard", "names", "probe", "single")

    def __init__(self, key: _ContentKey) -> None:
        self.names = tuple(name for name, _ in key)
        self.hard, self.probe = _phrase_owners(key)
        # One-word phrases by their word; longer ones by their first two words, so thousands
        # of phrases sharing a first word ("servico 1", "servico 2", ...) cost one lookup.
        self.single: set[str] = set()
        self.by_pair: dict[tuple[str, str], list[Phrase]] = {}
        for phrase in {**self.hard, **self.probe}:
            if len(phrase) == 1:
                self.single.add(phrase[0])
            else:
                self.by_pair.setdefault((phrase[0], phrase[1]), []).append(phrase)

    def hits(self, text: str) -> set[Phrase]:
        """Every indexed phrase that occurs in the text as consecutive whole words."""
        # Each message word stands for itself and for every singular it is the plural of.
        words = [(w, *singular_forms(w)) for w in _WORD_RE.findall(normalize_text(text))]
        found: set[Phrase] = set()
        for start, candidates in enumerate(words):
            following = words[start + 1] if start + 1 < len(words) else ()
            for first in candidates:
                if first in self.single:
                    found.add((first,))
                for second in following:
                    for phrase in self.by_pair.get((first, second), ()):
                        if phrase not in found and _continues(phrase, words, start):
                            found.add(phrase)
        return found


def _continues(phrase: Phrase, words: list[tuple[str, ...]], start: int) -> bool:
    """Whether the words after `start` are the rest of `phrase` (its first two already are)."""
    if start + len(phrase) > len(words):
        return False
    return all(phrase[i] in words[start + i] for i in range(2, len(phrase)))


def _content_key(skills: Sequence[LoadedSkill]) -> _ContentKey:
    return tuple((s.name, s.matcher) for s in skills)


@lru_cache(maxsize=_INDEX_CACHE_SIZE)
def _cached_index(key: _ContentKey) -> _KeywordIndex:
    # Keyed by value (names and keyword tuples), so different keywords never share an index.
    return _KeywordIndex(key)


def _match(
    index: _KeywordIndex,
    skills: Sequence[LoadedSkill],
    text: str,
    max_matched: int | None,
) -> MatchResult:
    if max_matched is not None and max_matched < 0:
        raise ValueError(f"max_matched must be >= 0 or None, got {max_matched}")
    found = index.hits(text)
    hard_counts: dict[int, int] = {}
    for phrase in found:
        for position in index.hard.get(phrase, ()):
            hard_counts[position] = hard_counts.get(position, 0) + 1
    probed = {p for phrase in found for p in index.probe.get(phrase, ()) if p not in hard_counts}
    names = index.names
    ranked = sorted(hard_counts, key=lambda p: (-hard_counts[p], names[p]))
    cut = len(ranked) if max_matched is None else max_matched
    return MatchResult(
        matched=[skills[p] for p in ranked[:cut]],
        probes=sorted(names[p] for p in probed),
        capped=[names[p] for p in ranked[cut:]],
    )


class CompiledMatcher:
    """A matcher compiled for one fixed list of skills, for a caller that caches it per org."""

    __slots__ = ("_index", "_skills")

    def __init__(self, skills: Sequence[LoadedSkill]) -> None:
        self._skills = tuple(skills)
        self._index = _KeywordIndex(_content_key(self._skills))

    def match(self, text: str, max_matched: int | None = None) -> MatchResult:
        return _match(self._index, self._skills, text, max_matched)


def compile_matcher(skills: Sequence[LoadedSkill]) -> CompiledMatcher:
    """Compile the keyword index of `skills` once; `.match(text)` then costs per message only."""
    return CompiledMatcher(skills)


def match_skills(
    skills: Sequence[LoadedSkill], text: str, *, max_matched: int | None = None
) -> MatchResult:
    """Match `text` against `skills` (rules in the module docstring).

    `max_matched=None` injects every hard match, 0 injects none (all go to `capped`).
    """
    skills = tuple(skills)
    return _match(_cached_index(_content_key(skills)), skills, text, max_matched)
