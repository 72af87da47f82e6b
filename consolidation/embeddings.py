"""The optional embeddings backend: OpenAI's `POST {base}/v1/embeddings` (llama.cpp's server,
vLLM and OpenAI all serve it), cosine between skills, links marked `embeddings`.

Never trusted to mean something just because it answers: every cycle first embeds a fixed
probe set of paraphrase triplets, and a backend whose vectors do not put each paraphrase
closer than the unrelated text (random or hashed vectors, a misconfigured model) is a stub:
no links. The remote server is hostile input like any other: texts go in batches of at most
MAX_BATCH, each request has SKILLET_EMBEDDINGS_TIMEOUT_S, the answer is read up to
MAX_RESPONSE_BYTES and must be one finite vector per text, all of one dimension up to
MAX_DIMENSIONS. Unreachable, slow, refusing or malformed: None (no links), logged.
"""

from __future__ import annotations

import asyncio
import json
import math
import operator
from collections.abc import Sequence
from typing import Any

import aiohttp
import structlog

from consolidation.similarity import Link, SkillText

log = structlog.get_logger(__name__)

EMBEDDINGS = "embeddings"
MAX_BATCH = 64  # texts per request
MAX_TEXT_CHARS = 2_000  # of each skill's text sent: its name, description, keywords, opening
MAX_DIMENSIONS = 8_192
MAX_RESPONSE_BYTES = 48 * 1024 * 1024  # 64 vectors of 8,192 floats as JSON text, with room
# Pairs are compared in Python (n^2 / 2 dot products): at 500 skills of 1,024 dimensions,
# about 125k products, a second or two; more skills than this are not embedded at all.
MAX_SKILLS = 500
DEFAULT_THRESHOLD = 0.85  # cosine; embedding models put paraphrases well above this
# (anchor, paraphrase, unrelated): a model that measures meaning ranks each paraphrase first.
PROBES = (
    (
        "troca de produto com defeito",
        "quero trocar um produto que veio quebrado",
        "horário de funcionamento da loja",
    ),
    ("pagamento por pix", "como pago com a chave pix", "prazo de entrega do pedido"),
    ("prazo de entrega", "quando chega o meu pedido", "tabela de tamanhos de roupa"),
    (
        "cancelar a compra",
        "quero desistir do pedido e ter o dinheiro de volta",
        "montagem do móvel",
    ),
)


class EmbeddingsBackend:
    name = EMBEDDINGS

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 20.0,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.url = base_url.rstrip("/") + "/v1/embeddings"
        self.model = model
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.threshold = threshold
        # Its links are already close paraphrases: a group averages at least a link's score.
        self.group_threshold = threshold

    async def links(self, skills: Sequence[SkillText]) -> list[Link] | None:
        if len(skills) > MAX_SKILLS:
            log.warning("consolidation.embeddings_too_many", skills=len(skills), max=MAX_SKILLS)
            return None
        try:
            async with aiohttp.ClientSession(trust_env=False) as session:
                probes = await self._embed(session, [t for triplet in PROBES for t in triplet])
                if not measures_meaning(probes):
                    log.warning("consolidation.embeddings_stub", url=self.url)
                    return None
                vectors = await self._embed(session, [_text(s) for s in skills])
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            log.warning("consolidation.embeddings_failed", url=self.url, error=repr(exc)[:200])
            return None
        return vector_links([s.name for s in skills], vectors, self.threshold)

    async def _embed(
        self, session: aiohttp.ClientSession, texts: Sequence[str]
    ) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), MAX_BATCH):
            batch = list(texts[start : start + MAX_BATCH])
            vectors += await self._batch(session, batch)
        if vectors and len({len(v) for v in vectors}) != 1:
            raise ValueError("vectors of different dimensions")
        return vectors

    async def _batch(self, session: aiohttp.ClientSession, batch: list[str]) -> list[list[float]]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {"model": self.model, "input": batch}
        async with asyncio.timeout(self.timeout_s):
            async with session.post(self.url, json=body, headers=headers) as response:
                if response.status != 200:
                    raise ValueError(f"status {response.status}")
                raw = await response.content.read(MAX_RESPONSE_BYTES + 1)
        if len(raw) > MAX_RESPONSE_BYTES:
            raise ValueError("answer too large")
        return parse_vectors(json.loads(raw), len(batch))


def _text(skill: SkillText) -> str:
    name = skill.name.replace("-", " ")
    text = f"{name}: {skill.description}\n{', '.join(skill.keywords)}\n{skill.body}"
    return text[:MAX_TEXT_CHARS]


def parse_vectors(answer: Any, expected: int) -> list[list[float]]:
    """One unit vector per input, in input order (OpenAI's `data[].index`)."""
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
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in vector):
            raise ValueError("embedding values must be finite numbers")
        ordered[index] = _unit([float(x) for x in vector])
    return [v for v in ordered if v is not None]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _cosine(a: list[float], b: list[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def measures_meaning(vectors: Sequence[list[float]]) -> bool:
    """Each probe's paraphrase closer to its anchor than the unrelated text, by a margin."""
    for i in range(0, len(vectors), 3):
        anchor, paraphrase, unrelated = vectors[i : i + 3]
        if _cosine(anchor, paraphrase) <= _cosine(anchor, unrelated) + 0.05:
            return False
    return True


def vector_links(
    names: Sequence[str], vectors: Sequence[list[float]], threshold: float
) -> list[Link]:
    links = []
    for i in range(len(vectors)):
        for j in range(i + 1, len(vectors)):
            score = _cosine(vectors[i], vectors[j])
            if score >= threshold:
                a, b = sorted((names[i], names[j]))
                links.append(Link(a, b, min(score, 1.0), EMBEDDINGS))
    return sorted(links, key=lambda link: (link.a, link.b))
