"""Lessons grouped by the similarity of their questions. Pure and deterministic.

Average linkage over the pair scores of a `QuestionSimilarity`: pairs are taken best first
(ties by index), and two groups join when the average score over all their cross pairs (a
missing pair counting 0) is at least the threshold. So a group is a topic every member of
it shares, not a chain of look-alikes (A like B, B like C, A nothing like C). Threshold
chosen on the tuning half of bench/suggestions.py's hand-written questions and reported on
the held-out half there.

A group's id is its earliest lesson's id (by time, then id): stable across requests while
that lesson stays in it, which a new lesson joining cannot change.
Cost: the S scored pairs sorted, and for each candidate join |A| x |B| lookups; the caller
caps the lessons read (suggestions.lesson_queries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from suggestions.lessons import Lesson
from suggestions.privacy import names_in, profile_names, redact_question
from suggestions.similarity import LEXICAL_GROUP_THRESHOLD, QuestionSimilarity

GROUP_THRESHOLD = LEXICAL_GROUP_THRESHOLD  # each similarity has its own (suggestions.similarity)


@dataclass(frozen=True)
class LessonGroup:
    id: str
    lessons: tuple[Lesson, ...]  # oldest first

    @property
    def last_seen_at(self) -> object:
        return self.lessons[-1].at


def cluster(
    scores: dict[tuple[int, int], float], count: int, threshold: float = GROUP_THRESHOLD
) -> list[list[int]]:
    """Indexes 0..count-1 in groups (each sorted; groups by their first index)."""
    owner = list(range(count))
    members: dict[int, list[int]] = {i: [i] for i in range(count)}
    for (i, j), _score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])):
        a, b = owner[i], owner[j]
        if a == b or _score < threshold:
            continue
        left, right = members[a], members[b]
        total = sum(_pair(scores, x, y) for x in left for y in right)
        if total / (len(left) * len(right)) < threshold:
            continue
        for k in right:
            owner[k] = a
        left.extend(right)
        del members[b]
    return sorted((sorted(m) for m in members.values()), key=lambda m: m[0])


def _pair(scores: dict[tuple[int, int], float], x: int, y: int) -> float:
    return scores.get((x, y) if x < y else (y, x), 0.0)


def _redacted(lesson: Lesson) -> str:
    """The question as grouping reads it: without the customer's data (names included)."""
    text = lesson.question_text
    return redact_question(text, [*profile_names(lesson.contact_name), *names_in(text)])[0]


def grouping_texts(lessons: Sequence[Lesson]) -> list[str]:
    """The texts grouping scores, in the order it reads the lessons (oldest first)."""
    return [_redacted(lesson) for lesson in ordered_lessons(lessons)]


def ordered_lessons(lessons: Sequence[Lesson]) -> list[Lesson]:
    return sorted(lessons, key=lambda lesson: (lesson.at, str(lesson.id)))


def group_lessons(
    lessons: Sequence[Lesson],
    similarity: QuestionSimilarity,
    threshold: float | None = None,
) -> list[LessonGroup]:
    """Groups of `lessons`, newest group (by its newest lesson) first; at the similarity's
    own threshold unless one is given."""
    ordered = ordered_lessons(lessons)
    scores = similarity.scores(grouping_texts(ordered))
    threshold = similarity.threshold if threshold is None else threshold
    groups = [
        LessonGroup(str(ordered[idx[0]].id), tuple(ordered[k] for k in idx))
        for idx in cluster(scores, len(ordered), threshold)
    ]
    return sorted(groups, key=lambda g: (g.lessons[-1].at, g.id), reverse=True)
