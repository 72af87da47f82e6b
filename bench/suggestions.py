"""Pairwise precision and recall of Sugestões' grouping (suggestions.grouping with the
lexical backend) on hand-written customers' questions.

Reads bench/data/suggestion_questions.tsv (242 questions in 24 topics, written by hand in
WhatsApp pt-BR): the odd questions of each topic are the `tune` part (GROUP_THRESHOLD was
chosen looking at it), the even ones the held-out `measure` part. For each part prints, at
the shipped threshold and at a few around it, pairwise precision (of the pairs put in one
group, the share of one topic), recall (of the pairs of one topic, the share put in one
group) and the groups' count; the target is precision >= 0.9 on `measure`. Exits 1 when it
is not met. Lists the tune part's wrongly joined pairs only, so the measured part stays
held out.

Run: .venv/bin/python bench/suggestions.py
"""

from __future__ import annotations

import argparse
import itertools
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suggestions.grouping import GROUP_THRESHOLD, group_lessons
from suggestions.lessons import Lesson, Question
from suggestions.similarity import LexicalSimilarity

CORPUS = Path(__file__).resolve().parent / "data" / "suggestion_questions.tsv"
TARGET_PRECISION = 0.9
T0 = datetime(2026, 12, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    groups: int
    wrong: list[tuple[str, str]]


def load(part: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        topic, text = line.split("\t", 1)
        seen[topic] = seen.get(topic, 0) + 1
        if (seen[topic] % 2 == 1) == (part == "tune"):
            rows.append((topic, text))
    return rows


def score(rows: list[tuple[str, str]], threshold: float, concepts: bool = True) -> Score:
    lessons = [
        Lesson(
            uuid.UUID(int=i + 1),
            uuid.UUID(int=i + 1),
            (Question(uuid.UUID(int=i + 1), text),),
            "resposta",
            "skt_a",
            T0,
        )
        for i, (_topic, text) in enumerate(rows)
    ]
    topic_of = {lesson.id: rows[i][0] for i, lesson in enumerate(lessons)}
    text_of = {lesson.id: rows[i][1] for i, lesson in enumerate(lessons)}
    groups = group_lessons(lessons, LexicalSimilarity(concepts=concepts), threshold)
    joined = right = 0
    wrong: list[tuple[str, str]] = []
    for group in groups:
        for a, b in itertools.combinations(group.lessons, 2):
            joined += 1
            if topic_of[a.id] == topic_of[b.id]:
                right += 1
            else:
                wrong.append((text_of[a.id], text_of[b.id]))
    same = sum(1 for a, b in itertools.combinations(rows, 2) if a[0] == b[0])
    precision = right / joined if joined else 1.0
    return Score(precision, right / same if same else 0.0, len(groups), wrong)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="numbers only, no tune-part list")
    args = parser.parse_args(argv)
    met = True
    for part in ("tune", "measure"):
        rows = load(part)
        plain = score(rows, GROUP_THRESHOLD, concepts=False)
        print(
            f"{part}: questions={len(rows)} threshold={GROUP_THRESHOLD:.2f} without concepts "
            f"precision={plain.precision:.3f} recall={plain.recall:.3f} groups={plain.groups}"
        )
        for threshold in sorted({0.3, 0.4, 0.45, GROUP_THRESHOLD, 0.55, 0.6}):
            s = score(rows, threshold)
            shipped = " (shipped)" if threshold == GROUP_THRESHOLD else ""
            print(
                f"{part}: questions={len(rows)} threshold={threshold:.2f}{shipped} "
                f"precision={s.precision:.3f} recall={s.recall:.3f} groups={s.groups}"
            )
            if part == "measure" and threshold == GROUP_THRESHOLD:
                met = s.precision >= TARGET_PRECISION
            if part == "tune" and threshold == GROUP_THRESHOLD and not args.quiet:
                for a, b in s.wrong:
                    print(f"  joined: {a!r} ~ {b!r}")
    print(f"target precision >= {TARGET_PRECISION} on measure: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
