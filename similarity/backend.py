"""The similarity interface: an `Embedder` turns texts into unit vectors, or raises
`SimilarityFailed`; the backend names and what each is identified by when stored.

Errors (one tree):
    SimilarityFailed (code `similarity_failed`)  the backend answered nothing usable: package
        missing, model unreadable, server down or slow, wrong count, dimension or NaN. The
        caller falls back to the lexical backend for that cycle or page; never retried here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

EMBEDDED = "embedded"
EMBEDDINGS = "embeddings"
LEXICAL = "lexical"
AUTO = "auto"
BACKENDS = (EMBEDDED, EMBEDDINGS, LEXICAL)
CHOICES = (AUTO, *BACKENDS)


class SimilarityFailed(Exception):
    """A backend could not embed; `backend` names it (the report's `fallback_from`)."""

    code = "similarity_failed"
    retryable = False

    def __init__(self, backend: str, message: str) -> None:
        super().__init__(message)
        self.backend = backend


class Embedder(Protocol):
    """`name` is the backend (`embedded` | `embeddings`); `model_id` names the model and its
    version, so vectors of another model are never compared with these (stored per both).
    `embed` returns one unit vector per text, in order, all of one dimension; it never blocks
    the event loop (CPU work in a thread, network with a timeout)."""

    @property
    def name(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
