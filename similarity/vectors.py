"""Pure rules around vectors: what of a skill or a question is embedded, checking an answer,
cosine. No I/O.

What is embedded of a skill: its name (hyphens as spaces), its description and the first
SKILL_BODY_CHARS characters of its body, the whole cut at SKILL_TEXT_CHARS. The model's cost
grows with the text (about 1 ms a token on one core) and a body's opening says what the skill
is about; bench/similarity.py and bench/consolidation.py measured the body length (see
docs/skills.md). A customer's question is cut to QUESTION_CHARS.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

# Measured on the hand-written corpus (bench/consolidation.py --body-chars): see docs/skills.md.
SKILL_BODY_CHARS = 200
SKILL_TEXT_CHARS = 600  # name + description + body opening, whatever a package allows
QUESTION_CHARS = 300
# What skill_text embeds, versioned: stored vectors are keyed by it (similarity.vector_queries).
# 2: the keywords joined the text.
TEXT_RECIPE = "2"
MAX_KEYWORDS_EMBEDDED = 16
MAX_DIMENSIONS = 8_192


def skill_text(
    name: str,
    description: str,
    body: str,
    keywords: Sequence[str] = (),
    body_chars: int = SKILL_BODY_CHARS,
) -> str:
    """The bounded text embedded for one skill version: its keywords, when it has any, on a
    line after the description (they say what the skill is for, in the pile's own word)."""
    title = name.replace("-", " ").replace("_", " ")
    opening = " ".join(body[: body_chars * 2].split())[:body_chars]
    head = f"{title}: {' '.join(description.split())}"
    listed = ", ".join(" ".join(k.split()) for k in keywords[:MAX_KEYWORDS_EMBEDDED])
    if listed:
        head += f"\n{listed}"
    return f"{head}\n{opening}"[:SKILL_TEXT_CHARS]


def question_text(text: str) -> str:
    return " ".join(text[: QUESTION_CHARS * 2].split())[:QUESTION_CHARS]


def checked(vectors: Sequence[Sequence[float]], expected: int) -> list[list[float]]:
    """`expected` finite vectors of one dimension, each scaled to unit length; ValueError else."""
    if len(vectors) != expected:
        raise ValueError(f"{len(vectors)} vectors for {expected} texts")
    out: list[list[float]] = []
    dimensions = {len(v) for v in vectors}
    if len(dimensions) > 1:
        raise ValueError("vectors of different dimensions")
    for vector in vectors:
        values = [float(x) for x in vector]
        if not 0 < len(values) <= MAX_DIMENSIONS:
            raise ValueError("bad dimension")
        if not all(math.isfinite(x) for x in values):
            raise ValueError("vector values must be finite")
        norm = math.sqrt(sum(x * x for x in values))
        if norm == 0:
            raise ValueError("zero vector")
        out.append([x / norm for x in values])
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Of two unit vectors."""
    return float(sum(map(operator.mul, a, b)))
