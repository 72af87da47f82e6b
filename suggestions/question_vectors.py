"""Customers' questions as vectors of the similarity backend in use, for grouping them.

A question is embedded as the grouping reads it (redacted, cut to QUESTION_CHARS by
similarity.vectors.question_text), through the backend's `Embedder` (its CPU work in a
thread, never on the event loop). Vectors are kept in a bounded in-process cache keyed by
model id and text (MAX_CACHED, least recently used out): a listing's questions are the same
from one read to the next, so a warm read embeds nothing. A read embeds at most
MAX_EMBED_PER_READ missing questions (about 25 ms each on one core); when more are missing,
or the backend fails, that read groups lexically (the next reads fill the cache). Nothing
here is state another worker needs: a cold process only re-embeds.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import structlog

from similarity.backend import Embedder, SimilarityFailed
from similarity.vectors import question_text
from suggestions.grouping import grouping_texts
from suggestions.lessons import Lesson
from suggestions.similarity import BlendedSimilarity, LexicalSimilarity, QuestionSimilarity

log = structlog.get_logger(__name__)

MAX_CACHED = 8_000  # vectors of 384 float32: about 12 MB
MAX_EMBED_PER_READ = 160

Vector = npt.NDArray[np.float32]


class _Cache:
    lock = threading.Lock()
    vectors: ClassVar[OrderedDict[tuple[str, bytes], Vector]] = OrderedDict()


def _key(model_id: str, text: str) -> tuple[str, bytes]:
    return model_id, hashlib.sha256(text.encode("utf-8")).digest()


def _cached(model_id: str, texts: Sequence[str]) -> list[Vector | None]:
    found: list[Vector | None] = []
    with _Cache.lock:
        for text in texts:
            vector = _Cache.vectors.get(_key(model_id, text))
            if vector is not None:
                _Cache.vectors.move_to_end(_key(model_id, text))
            found.append(vector)
    return found


def _remember(model_id: str, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
    with _Cache.lock:
        for text, vector in zip(texts, vectors, strict=True):
            _Cache.vectors[_key(model_id, text)] = np.asarray(vector, dtype=np.float32)
        while len(_Cache.vectors) > MAX_CACHED:
            _Cache.vectors.popitem(last=False)


async def question_vectors(
    embedder: Embedder, texts: Sequence[str], max_embed: int = MAX_EMBED_PER_READ
) -> npt.NDArray[np.float64] | None:
    """One unit row per text (in order), or None: too many to embed on this read, or the
    backend failed (the caller groups lexically)."""
    cut = [question_text(t) for t in texts]
    if not cut:
        return np.zeros((0, 0))
    found = _cached(embedder.model_id, cut)
    missing = sorted({t for t, v in zip(cut, found, strict=True) if v is None})
    if len(missing) > max_embed:
        # Embed a bounded share now, so the cache fills over a few reads.
        missing = missing[:max_embed]
        complete = False
    else:
        complete = True
    if missing:
        try:
            fresh = await embedder.embed(missing)
        except SimilarityFailed as exc:
            log.warning("suggestions.similarity_fallback", backend=embedder.name, error=str(exc))
            return None
        _remember(embedder.model_id, missing, fresh)
    if not complete:
        return None
    rows = _cached(embedder.model_id, cut)
    if any(row is None for row in rows):  # evicted meanwhile by a larger read
        return None
    return np.asarray(rows, dtype=np.float64).reshape(len(cut), -1)


async def similarity_for(
    embedder: Embedder | None, lessons: Sequence[Lesson]
) -> QuestionSimilarity:
    """How these lessons are grouped: the backend's vectors blended with the lexical rules,
    or the lexical rules alone (no vector backend, too many questions not embedded yet, or a
    failure)."""
    if embedder is None:
        return LexicalSimilarity()
    vectors = await question_vectors(embedder, grouping_texts(lessons))
    if vectors is None:
        return LexicalSimilarity()
    return BlendedSimilarity(embedder.name, vectors)
