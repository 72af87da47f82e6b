"""S3 going away mid-turn: read_skill_reference teaches `storage_unavailable`, the turn replies."""

from __future__ import annotations

import asyncpg

from dev.urls import endpoint_of
from tests.integration.support import create_org, enqueue, payload, publish, result_of, run_burst
from tests.integration.tcp_proxy import TcpProxy
from turn.local_model import LocalModel
from turn.model import ModelRequest, ModelResponse
from worker.resources import Resources
from worker.settings import Settings


class CutStorageFirst:
    """The local model, but S3 disappears just before its first answer."""

    def __init__(self, proxy: TcpProxy) -> None:
        self.proxy = proxy
        self.inner = LocalModel()
        self.tool_results: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await self.proxy.stop()
        self.tool_results += [m.content for m in request.messages if m.role == "tool"]
        return await self.inner.complete(request)


async def test_a_turn_replies_while_object_storage_is_down(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "boleto",
        keywords=["boleto"],
        body="Envio o boleto já.",
        references={"references/prazos.md": "Prazo de 30 dias."},
    )
    s3 = endpoint_of(settings.s3_endpoint_url)
    proxy = TcpProxy(s3.host, s3.port)
    await proxy.start()
    try:
        through_proxy = settings.model_copy(
            update={"s3_endpoint_url": f"http://127.0.0.1:{proxy.port}"}
        )
        [job] = await enqueue(through_proxy, payload(org, "m1", "segunda via do boleto"))
        model = CutStorageFirst(proxy)
        await run_burst(through_proxy, model=model)
    finally:
        await proxy.stop()
    result = await result_of(settings, job)
    assert result["status"] == "replied" and result["tools"] == ["read_skill_reference"]
    assert model.tool_results and model.tool_results[0].startswith("[erro storage_unavailable]")
    reply = await db.fetchval(
        "select o.body from outbox o where o.organization_id = $1 and o.status = 'sent'", org
    )
    assert reply == "Envio o boleto já."
