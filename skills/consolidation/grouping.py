"""Groups of linked skills for distillation, pure: stars around the most linked skill.

Why stars and not connected components: links chain ("troca de tênis" ~ "troca de camisa"
~ "camisa: tamanhos"), and a component would merge unrelated ends of the chain. Here the
centres are taken most linked first (the sum of a skill's link scores: a pile's medoid
gathers the most of it), each takes its untaken neighbours strongest link first, and a
neighbour joins only if it is linked to every member already taken (so every pair of a group
is linked), up to MAX_GROUP_SKILLS. The group's umbrella is then its most used member (30-day
uses, then latest activity, then name). Measured on bench/consolidation.py against stars
centred on the most used skill: more of each pile in one group, fewer unrelated skills joined.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from skills.consolidation.similarity import Link

MAX_GROUP_SKILLS = 8  # the umbrella included: a merge a person can still review at a glance


@dataclass(frozen=True)
class Candidate:
    """A skill distillation may merge (agent-authored, unpinned, not archived, not pending)."""

    name: str
    uses_30d: int = 0
    last_activity_at: datetime | None = None


@dataclass(frozen=True)
class Group:
    umbrella: str
    absorbs: tuple[str, ...]  # strongest link to the umbrella first
    scores: tuple[float, ...]  # of each absorbed skill's link to the umbrella


def umbrella_rank(candidate: Candidate) -> tuple[int, float, str]:
    """Sort key: most uses first, then the latest activity (never active last), then name."""
    seen = candidate.last_activity_at.timestamp() if candidate.last_activity_at else float("-inf")
    return (-candidate.uses_30d, -seen, candidate.name)


def star_groups(
    candidates: Sequence[Candidate], links: Iterable[Link], max_size: int = MAX_GROUP_SKILLS
) -> list[Group]:
    """Groups of at least two candidates; links to non-candidates are ignored."""
    names = {c.name for c in candidates}
    neighbours: defaultdict[str, list[tuple[float, str]]] = defaultdict(list)
    linked_scores: dict[frozenset[str], float] = {}
    for link in links:
        if link.a in names and link.b in names:
            linked_scores[frozenset((link.a, link.b))] = link.score
            neighbours[link.a].append((link.score, link.b))
            neighbours[link.b].append((link.score, link.a))
    by_name = {c.name: c for c in candidates}
    strength = {c.name: sum(score for score, _ in neighbours[c.name]) for c in candidates}
    taken: set[str] = set()
    groups: list[Group] = []
    # Centres: the most linked first (a pile's medoid gathers the most of it).
    for centre in sorted(candidates, key=lambda c: (-strength[c.name], c.name)):
        if centre.name in taken:
            continue
        picked: list[tuple[float, str]] = []
        for score, other in sorted(neighbours[centre.name], key=lambda p: (-p[0], p[1])):
            if len(picked) == max_size - 1:
                break
            if other not in taken and all(
                frozenset((other, m)) in linked_scores for _, m in picked
            ):
                picked.append((score, other))
        if not picked:
            continue
        members = [centre.name, *(other for _, other in picked)]
        taken.update(members)
        umbrella = min((by_name[n] for n in members), key=umbrella_rank).name
        absorbs = sorted(
            (n for n in members if n != umbrella),
            key=lambda n: (-_score(linked_scores, umbrella, n), n),
        )
        groups.append(
            Group(
                umbrella, tuple(absorbs), tuple(_score(linked_scores, umbrella, n) for n in absorbs)
            )
        )
    return groups


def _score(scores: dict[frozenset[str], float], a: str, b: str) -> float:
    return scores.get(frozenset((a, b)), 0.0)
