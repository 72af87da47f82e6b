"""Scores between stored vectors, pure: cosine after the model's background is taken out
(similarity.background), or plain cosine when the model has none; local scaling (what a
consolidation's grouping score adds, consolidation.measure.grouping_scores); and which pairs
are links.

Links join each skill only to its NEAREST_PER_SKILL closest others (either side's choice),
at or above the line: an embedding model scores skills about one aspect of different
products ("troca de geladeira", "troca de fogão") alike, and in an org of many such skills
every pair would pass a line. Measured on bench/consolidation.py (embedded, background
removed, lines 0.18 / 0.24): all pairs, generated corpus precision 0.43 / 0.45 (seeds 1, 2),
hand-written held-out 0.909 / 0.909; 4 nearest, 0.67 / 0.68 for recall 0.94 / 0.95 and the
hand-written half unchanged (3: 0.73 but recall 0.85; 5: 0.65). It also bounds a cycle's
links to 4 per skill, so grouping 300 skills costs milliseconds, not 45k links.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def centered(
    vectors: Sequence[Sequence[float]], background: Sequence[float] | None
) -> npt.NDArray[np.float64]:
    """Unit rows of `vectors` minus `background` (a row that was the background stays 0)."""
    matrix = np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1)
    if background is not None and matrix.shape[1] == len(background):
        matrix = matrix - np.asarray(background, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: npt.NDArray[np.float64] = np.divide(
        matrix, norms, out=np.zeros_like(matrix), where=norms > 0
    )
    return unit


def score_matrix(
    left: Sequence[Sequence[float]],
    right: Sequence[Sequence[float]],
    background: Sequence[float] | None,
) -> npt.NDArray[np.float64]:
    """Every (left, right) pair's score, in [-1, 1]."""
    if not left or not right:
        return np.zeros((len(left), len(right)))
    return centered(left, background) @ centered(right, background).T


NEAREST_PER_SKILL = 4
# The background a set of skills is measured against leans towards the set's own mean as it
# grows: weight n / (n + ORG_MEAN_PRIOR) for the set's mean, the rest for the model's shipped
# background. A small org (the nine skills of the proof) is measured against the shipped one
# (its own mean would be mostly its piles); a large one also against what its own skills share
# (300 skills of one store's templates: "explica ... para o cliente"). bench/consolidation.py,
# lines re-chosen for each: prior 200, generated seeds 1 / 2 precision 0.74 / 0.74 for recall
# 0.95 / 0.95 (the shipped background alone: 0.61 / 0.61, recall 0.89), hand-written held-out
# unchanged (0.909 / 0.909); prior 50, 0.72 / 0.74.
ORG_MEAN_PRIOR = 200.0


def set_background(
    vectors: Sequence[Sequence[float]], shipped: Sequence[float] | None
) -> list[float] | None:
    """The background of this set of skills (see ORG_MEAN_PRIOR); None without a shipped one
    (an embeddings server's model: plain cosine, as its lines were measured)."""
    if shipped is None or not vectors:
        return None if shipped is None else list(shipped)
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.shape[1] != len(shipped):
        return list(shipped)
    weight = len(vectors) / (len(vectors) + ORG_MEAN_PRIOR)
    blended = (1 - weight) * np.asarray(shipped, dtype=np.float64) + weight * matrix.mean(axis=0)
    return [float(x) for x in blended]


def nearest_pairs(
    scores: npt.NDArray[np.float64], threshold: float, nearest: int = NEAREST_PER_SKILL
) -> list[tuple[int, int]]:
    """(i, j), i < j, of a square score matrix: j among i's `nearest` best or i among j's,
    and the score at or above `threshold`."""
    n = scores.shape[0]
    if n < 2:
        return []
    others = scores.copy()
    np.fill_diagonal(others, -np.inf)
    take = min(nearest, n - 1)
    best = np.argpartition(-others, take - 1, axis=1)[:, :take]
    chosen = np.zeros((n, n), dtype=bool)
    chosen[np.repeat(np.arange(n), take), best.ravel()] = True
    chosen |= chosen.T
    rows, cols = np.nonzero(np.triu(chosen & (scores >= threshold), k=1))
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def local_scaled(scores: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.float64]:
    """Each pair's score less the mean of the two skills' own neighbourhoods: score(i, j) -
    (r_i + r_j) / 2, r_i the mean of i's `k` best scores with others (cross-domain similarity
    local scaling). In an org of many skills about one product or one service, every skill
    has close neighbours and a raw line joins them all; a pair stands out only when it is
    closer than each side's usual neighbours. A set of fewer than two stays as it is."""
    n = scores.shape[0]
    if n < 2:
        return scores.copy()
    others = scores.copy()
    np.fill_diagonal(others, -np.inf)
    take = min(k, n - 1)
    best = -np.partition(-others, take - 1, axis=1)[:, :take]
    usual = best.mean(axis=1)
    scaled: npt.NDArray[np.float64] = scores - 0.5 * (usual[:, None] + usual[None, :])
    return scaled
