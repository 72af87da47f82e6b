"""The embeddings backend against a fake OpenAI `/v1/embeddings` server on 127.0.0.1: batches
of at most 64, the meaning probe (random vectors are refused), timeouts, unreachable and
malformed servers (SimilarityFailed; a cycle then measures with lexical and says so), a real
cycle marking its links `embeddings` and storing one vector per version, and a warm cycle
that embeds nothing."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import asyncpg
import pytest
import pytest_asyncio
from aiohttp import web

from consolidation.embeddings import EMBEDDINGS, EmbeddingsBackend
from consolidation.gates import Pressure
from consolidation.run import ConsolidationConfig, consolidate_org
from consolidation.similarity import SkillText
from similarity.backend import SimilarityFailed
from tests.integration.curator_support import NOW
from tests.integration.test_consolidation import _org
from worker.resources import Resources

DIMENSIONS = 64
# The fake model's meaning: words of one concept share a dimension (what a real model learns).
CONCEPTS = {
    "troca": "troc trocar troca trocas defeito quebrado substituir",
    "pagamento": "pix pago pagamento pagar chave comprovante",
    "entrega": "entrega prazo chega pedido frete envio",
    "horario": "horario funcionamento abre fecha loja",
    "cancelar": "cancelar desistir dinheiro volta estorno compra",
    "tamanho": "tabela tamanhos roupa medidas",
    "montagem": "montagem movel montar",
}
_CONCEPT_OF = {w: i for i, words in enumerate(CONCEPTS.values()) for w in words.split()}


def _fold(text: str) -> list[str]:
    table = str.maketrans("áàâãéêíóôõúç", "aaaaeeiooouc")
    return re.findall(r"[a-z]+", text.lower().translate(table))


def meaningful_vector(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in _fold(text):
        if word in _CONCEPT_OF:
            vector[_CONCEPT_OF[word]] += 3.0
        elif len(word) > 3:  # other words: a faint hashed dimension of their own
            vector[8 + int(hashlib.sha256(word.encode()).hexdigest(), 16) % (DIMENSIONS - 8)] += 0.2
    return vector


@dataclass
class FakeEmbeddings:
    """OpenAI's wire format: {"model", "input": [...]} -> {"data": [{"embedding", "index"}]}."""

    mode: str = "meaningful"  # meaningful | random | slow | malformed
    batches: list[int] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        texts = body["input"]
        self.batches.append(len(texts))
        self.auth.append(request.headers.get("Authorization"))
        if self.mode == "slow":
            await asyncio.sleep(1.5)
        if self.mode == "malformed":
            return web.json_response({"data": [{"embedding": ["NaN"], "index": 0}]})
        rng = random.Random(len(self.batches))
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": meaningful_vector(t)
                if self.mode == "meaningful"
                else [rng.gauss(0, 1) for _ in range(DIMENSIONS)],
            }
            for i, t in enumerate(texts)
        ]
        return web.json_response({"object": "list", "data": data, "model": body["model"]})


@pytest_asyncio.fixture(loop_scope="session")
async def fake() -> AsyncIterator[tuple[FakeEmbeddings, str]]:
    server = FakeEmbeddings()
    app = web.Application()
    app.router.add_post("/v1/embeddings", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield server, f"http://127.0.0.1:{port}"
    await runner.cleanup()


def _skills(count: int) -> list[SkillText]:
    topics = [
        ("troca", "Troca de produto com defeito", "Troque o produto quebrado."),
        ("pix", "Pagamento por pix", "Mande a chave pix e peça o comprovante."),
        ("horario", "Horário de funcionamento", "A loja abre às 9h e fecha às 18h."),
    ]
    return [
        SkillText(f"{topics[i % 3][0]}-{i}", topics[i % 3][1], topics[i % 3][2], ())
        for i in range(count)
    ]


async def test_batches_of_at_most_64_and_links_of_one_meaning(
    fake: tuple[FakeEmbeddings, str],
) -> None:
    server, url = fake
    backend = EmbeddingsBackend(url, "fake-embed", api_key="segredo", timeout_s=5)
    links = await backend.links(_skills(130))
    assert links is not None and links
    assert all(x.backend == EMBEDDINGS for x in links)
    assert all(x.a.split("-")[0] == x.b.split("-")[0] for x in links)  # never across topics
    assert server.batches == [12, 64, 64, 2]  # the probes, then the skills
    assert set(server.auth) == {"Bearer segredo"}


async def test_random_vectors_slow_malformed_or_absent_servers_fail(
    fake: tuple[FakeEmbeddings, str],
) -> None:
    server, url = fake
    for mode in ("random", "malformed", "slow"):
        server.mode = mode
        backend = EmbeddingsBackend(url, "fake-embed", timeout_s=0.3)
        with pytest.raises(SimilarityFailed):
            await backend.links(_skills(6))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = free.getsockname()[1]
    with pytest.raises(SimilarityFailed):
        await EmbeddingsBackend(f"http://127.0.0.1:{closed}", "m").links(_skills(6))


async def test_a_cycle_with_embeddings_marks_its_links_and_an_unreachable_one_falls_back(
    fake: tuple[FakeEmbeddings, str], db: asyncpg.Connection, resources: Resources
) -> None:
    server, url = fake
    server.mode = "meaningful"
    org = await _org(db, resources.store)
    config = ConsolidationConfig(
        pressure=Pressure(min_skills=0), backend=EmbeddingsBackend(url, "fake-embed")
    )
    report = await consolidate_org(db, resources.store, org, config, now=NOW)
    assert report.ran and report.links and {x.backend for x in report.links} == {EMBEDDINGS}
    backends = await db.fetch(
        "select distinct backend from skill_links where organization_id = $1", org
    )
    assert [r["backend"] for r in backends] == [EMBEDDINGS]
    assert report.proposals and report.proposals[0].umbrella == "trocar-produto"
    assert (report.backend, report.fallback_from) == (EMBEDDINGS, None)
    stored = await db.fetchval(
        "select count(*) from skill_vectors where organization_id = $1 and backend = $2",
        org,
        EMBEDDINGS,
    )
    installed = await db.fetchval(
        "select count(*) from skill_pointers where organization_id = $1", org
    )
    assert stored == installed  # one vector per installed version, none for the proposals
    calls = len(server.batches)
    warm = await consolidate_org(db, resources.store, org, config, now=NOW, force=True)
    assert (
        warm.backend == EMBEDDINGS and len(server.batches) == calls
    )  # a warm cycle embeds nothing

    other = await _org(db, resources.store)
    unreachable = ConsolidationConfig(
        pressure=Pressure(min_skills=0),
        backend=EmbeddingsBackend("http://127.0.0.1:9", "m", timeout_s=0.5),
    )
    fell = await consolidate_org(db, resources.store, other, unreachable, now=NOW)
    assert fell.ran and fell.skipped_reason is None
    assert (fell.backend, fell.fallback_from) == ("lexical", EMBEDDINGS)
    assert fell.to_json()["backend"] == "lexical"
    assert fell.to_json()["fallback_from"] == EMBEDDINGS
    assert {x.backend for x in fell.links} <= {"lexical"}
    written = await db.fetch(
        "select distinct backend from skill_links where organization_id = $1", other
    )
    assert [r["backend"] for r in written] in ([], ["lexical"])
