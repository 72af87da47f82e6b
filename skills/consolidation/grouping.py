"""Groups of linked skills for distillation, pure: stars around the most used skill.

Why stars and not connected components: links chain ("troca de tênis" ~ "troca de camisa"
~ "camisa: tamanhos"), and a component would merge unrelated ends of the chain. Here every
absorbed skill is linked directly to its umbrella. The candidates are ranked by the
umbrella rule (30-day uses, then latest activity, then name); walking that ranking, each
skill not yet taken becomes an umbrella and takes its linked, untaken neighbours (strongest
link first) up to MAX_GROUP_SKILLS; so an umbrella is always its group's most used skill.
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
    linked: set[frozenset[str]] = set()
    for link in links:
        if link.a in names and link.b in names:
            linked.add(frozenset((link.a, link.b)))
            neighbours[link.a].append((link.score, link.b))
            neighbours[link.b].append((link.score, link.a))
    taken: set[str] = set()
    groups: list[Group] = []
    for candidate in sorted(candidates, key=umbrella_rank):
        if candidate.name in taken:
            continue
        picked: list[tuple[float, str]] = []
        for score, other in sorted(neighbours[candidate.name], key=lambda p: (-p[0], p[1])):
            if len(picked) == max_size - 1:
                break
            if other not in taken and all(frozenset((other, m)) in linked for _, m in picked):
                picked.append((score, other))
        if not picked:
            continue
        taken.add(candidate.name)
        taken.update(other for _, other in picked)
        groups.append(
            Group(
                candidate.name,
                tuple(other for _, other in picked),
                tuple(score for score, _ in picked),
            )
        )
    return groups
