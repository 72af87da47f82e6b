"""A suggestion's keywords, from the customers' own words, checked by the turn's matcher. Pure.

Candidates are the words of the group's questions (after privacy removal) that say what they
are about: at least MIN_KEYWORD_LETTERS letters, letters only (no number), no stop word
(suggestions.similarity.STOP_WORDS) and no person's name (`names`: profile names, names
customers gave, COMMON_NAMES); then pairs of such words standing next to each other in a
question ("segunda via"). Each candidate is matched, by turn.matcher's own code
(compile_matcher, keywords only), against the group's questions and against the org's recent
customer messages outside the group (`others`).

Greedy cover: the candidate that matches the most questions not matched yet (ties: fewer
outside matches, fewer words, then alphabetical) is taken while the keywords together match
at most `budget` outside messages: 2% of them, or MIN_BUDGET for an org with fewer than
SMALL_ORG_MESSAGES. Questions no keyword can match within the budget are `unmatched`.
Bounds: at most MAX_CANDIDATES candidates are tried, and the caller caps `others`.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skills.models import LoadedSkill, SkillMatcher
from suggestions.privacy import fold
from suggestions.similarity import STOP_WORDS, content_words
from turn.matcher import compile_matcher
from turn.matcher.intent_model import NO_INTENT_MODELS

MIN_KEYWORD_LETTERS = 3
MAX_CANDIDATES = 200
MAX_KEYWORDS = 12
OUTSIDE_SHARE = 0.02
SMALL_ORG_MESSAGES = 500
MIN_BUDGET = 10
_LETTERS = re.compile(r"[a-z]+")
# First names common in Brazil: a customer's name is no keyword even when no profile says it.
COMMON_NAMES = frozenset(
    """
    ana maria joao jose antonio francisco carlos paulo pedro lucas luiz luis marcos gabriel
    rafael daniel marcelo bruno eduardo felipe rodrigo manoel mateus andre fernando fabio
    leonardo gustavo guilherme leandro tiago thiago vinicius diego julio juliana adriana
    juliane fernanda patricia aline sandra camila amanda bruna jessica leticia julia luciana
    vanessa mariana gabriela vitoria beatriz larissa rita joana carla claudia renata debora
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@dataclass(frozen=True)
class KeywordChoice:
    keywords: tuple[str, ...]
    unmatched: tuple[int, ...]  # indexes of the questions no keyword matches
    outside_matches: int  # of `others`, matched by the keywords together
    budget: int


def budget_of(messages: int) -> int:
    if messages < SMALL_ORG_MESSAGES:
        return MIN_BUDGET
    return int(messages * OUTSIDE_SHARE)


def candidates(questions: Sequence[str], names: Iterable[str] = ()) -> list[str]:
    """Single words, then adjacent pairs, in first-seen order (module docstring)."""
    banned = {fold(n) for name in names for n in name.split()} | COMMON_NAMES
    found: dict[str, None] = {}
    pairs: dict[str, None] = {}
    for text in questions:
        words = [w for w in content_words(text) if _usable(w, banned)]
        for w in words:
            found.setdefault(w, None)
        for a, b in itertools.pairwise(words):
            pairs.setdefault(f"{a} {b}", None)
    return [*found, *pairs][:MAX_CANDIDATES]


def _usable(word: str, banned: set[str]) -> bool:
    return (
        len(word) >= MIN_KEYWORD_LETTERS
        and _LETTERS.fullmatch(word) is not None
        and word not in STOP_WORDS
        and word not in banned
    )


def _hits(keywords: Sequence[str], texts: Sequence[str]) -> list[set[int]]:
    """Per keyword, the indexes of `texts` it matches (the matcher's own code)."""
    skills = [
        LoadedSkill(version_id=uuid.UUID(int=i + 1), name=f"k{i}", matcher=SkillMatcher([k]))
        for i, k in enumerate(keywords)
    ]
    index = {s.name: i for i, s in enumerate(skills)}
    matcher = compile_matcher(skills, intent_models=NO_INTENT_MODELS)
    hits: list[set[int]] = [set() for _ in keywords]
    for t, text in enumerate(texts):
        for skill in matcher.match(text).matched:
            hits[index[skill.name]].add(t)
    return hits


def choose_keywords(
    questions: Sequence[str], others: Sequence[str], names: Iterable[str] = ()
) -> KeywordChoice:
    """Keywords for `questions` (redacted), checked against `others` (module docstring)."""
    budget = budget_of(len(others))
    pool = candidates(questions, names)
    inside = _hits(pool, questions)
    outside = _hits(pool, others)
    chosen: list[int] = []
    covered: set[int] = set()
    spent: set[int] = set()
    while len(chosen) < MAX_KEYWORDS:
        best = None
        best_rank: tuple[int, int, int, str] | None = None
        for k in range(len(pool)):
            gain = len(inside[k] - covered)
            if k in chosen or gain == 0 or len(spent | outside[k]) > budget:
                continue
            rank = (-gain, len(outside[k] - spent), pool[k].count(" "), pool[k])
            if best_rank is None or rank < best_rank:
                best, best_rank = k, rank
        if best is None:
            break
        chosen.append(best)
        covered |= inside[best]
        spent |= outside[best]
    unmatched = tuple(i for i in range(len(questions)) if i not in covered)
    return KeywordChoice(tuple(pool[k] for k in chosen), unmatched, len(spent), budget)
