"""Scores between stored vectors, pure: cosine after the model's background is taken out
(similarity.background), or plain cosine when the model has none."""

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
