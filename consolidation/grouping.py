"""Groups of linked skills for distillation, pure: average linkage over the links.

Every skill starts alone; the two groups whose links average highest (a missing link counts
0, so the average is over every pair of the merged group) merge, again and again, while that
average is at least the threshold and the merged group has at most MAX_GROUP_SKILLS. Why not
connected components: links chain ("troca de tênis" ~ "troca de camisa" ~ "camisa:
tamanhos") and a component would merge unrelated ends of the chain. Why not the previous
stars whose every pair had to be linked: one paraphrased member whose link to a single other
fell short split its pile. bench/consolidation.py, seeds 1-24, same links: stars (complete
linkage) 0.76 recall, average linkage 0.94 for precision 0.975 (and 0.97 for 0.98 with
the final features and GROUP_THRESHOLD).
The group's umbrella is then its most used member (30-day uses, then latest activity, then
name).

Cost: with E links and n skills, O(E log E) heap work plus, per merge, the merged group's
neighbours (at most n); deterministic, because skills are numbered in name order and ties
in the heap break on those numbers.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from consolidation.similarity import GROUP_THRESHOLD, Link

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
    scores: tuple[float, ...]  # of each absorbed skill's link to the umbrella (0: none)


def umbrella_rank(candidate: Candidate) -> tuple[int, float, str]:
    """Sort key: most uses first, then the latest activity (never active last), then name."""
    seen = candidate.last_activity_at.timestamp() if candidate.last_activity_at else float("-inf")
    return (-candidate.uses_30d, -seen, candidate.name)


class _Clusters:
    """Groups by number, with the sum of link scores between every two that are linked."""

    def __init__(self, names: Sequence[str], scores: dict[tuple[int, int], float]) -> None:
        self.members: dict[int, list[int]] = {i: [i] for i in range(len(names))}
        self.sums: dict[int, dict[int, float]] = {i: {} for i in range(len(names))}
        for (i, j), score in scores.items():
            self.sums[i][j] = self.sums[j][i] = score

    def average(self, i: int, j: int) -> float:
        return self.sums[i].get(j, 0.0) / (len(self.members[i]) * len(self.members[j]))

    def merge(self, i: int, j: int) -> None:
        """Group j into group i."""
        self.members[i] += self.members.pop(j)
        for k, score in self.sums.pop(j).items():
            if k != i:
                del self.sums[k][j]
                self.sums[i][k] = self.sums[k][i] = self.sums[i].get(k, 0.0) + score
        self.sums[i].pop(j, None)


def average_groups(
    candidates: Sequence[Candidate],
    links: Iterable[Link],
    threshold: float = GROUP_THRESHOLD,
    max_size: int = MAX_GROUP_SKILLS,
) -> list[Group]:
    """Groups of at least two candidates, largest first (then the strongest average, then the
    umbrella's name); links to non-candidates are ignored."""
    names = sorted({c.name for c in candidates})
    number = {n: i for i, n in enumerate(names)}
    scores: dict[tuple[int, int], float] = {}
    for link in links:
        if link.a in number and link.b in number and link.a != link.b:
            i, j = sorted((number[link.a], number[link.b]))
            scores[(i, j)] = link.score
    clusters = _Clusters(names, scores)
    heap: list[tuple[float, int, int, int]] = []

    def offer(i: int, j: int) -> None:
        size = len(clusters.members[i]) + len(clusters.members[j])
        average = clusters.average(i, j)
        if average >= threshold and size <= max_size:
            # The sizes at push time say whether the entry is stale when popped.
            heapq.heappush(heap, (-average, min(i, j), max(i, j), size))

    for i, j in sorted(scores):
        offer(i, j)
    while heap:
        _, i, j, size = heapq.heappop(heap)
        members = clusters.members
        if i not in members or j not in members or len(members[i]) + len(members[j]) != size:
            continue  # one of them merged since: its fresh entry is in the heap
        clusters.merge(i, j)
        for k in sorted(clusters.sums[i]):
            offer(i, k)
    return _groups(clusters, names, candidates, scores)


def _groups(
    clusters: _Clusters,
    names: Sequence[str],
    candidates: Sequence[Candidate],
    scores: dict[tuple[int, int], float],
) -> list[Group]:
    by_name = {c.name: c for c in candidates}
    index = {n: i for i, n in enumerate(names)}

    def score(a: str, b: str) -> float:
        i, j = sorted((index[a], index[b]))
        return scores.get((i, j), 0.0)

    found: list[tuple[int, float, Group]] = []
    for numbers in clusters.members.values():
        if len(numbers) < 2:
            continue
        members = [names[n] for n in numbers]
        umbrella = min((by_name[n] for n in members), key=umbrella_rank).name
        absorbs = sorted(
            (n for n in members if n != umbrella), key=lambda n: (-score(umbrella, n), n)
        )
        pairs = [(x, y) for k, x in enumerate(numbers) for y in numbers[k + 1 :]]
        average = sum(scores.get((min(x, y), max(x, y)), 0.0) for x, y in pairs) / len(pairs)
        group = Group(umbrella, tuple(absorbs), tuple(score(umbrella, n) for n in absorbs))
        found.append((len(members), average, group))
    found.sort(key=lambda f: (-f[0], -f[1], f[2].umbrella))
    return [group for _, _, group in found]
