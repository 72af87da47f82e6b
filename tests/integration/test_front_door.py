"""The webhook's front door: one pooled connection and one statement store a delivered
message, in the org of the number it reached (skillet_receive_inbound)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import asyncpg

from core.channel_kind import ChannelKind
from core.db import create_pool
from core.db_roles import WEBHOOK_ROLE
from jobs.queue import open_queue
from tests.integration.support import create_org
from tests.integration.webhook_support import connect_number, queued_payloads
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from webhook.cloud_api import parse_cloud_api
from webhook.ingest import ingest
from worker.settings import Settings

STATEMENTS = ("execute", "fetch", "fetchrow", "fetchval", "executemany")


class CountingPool:
    """The real pool, counting what its users acquire and send."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.acquired = 0
        self.statements: list[str] = []

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        self.acquired += 1
        async with self.pool.acquire() as conn:
            yield _CountingConnection(conn, self.statements)


class _CountingConnection:
    def __init__(self, conn: Any, statements: list[str]) -> None:
        self._conn = conn
        self._statements = statements

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._conn, name)
        if name not in STATEMENTS:
            return attr

        async def counted(query: str, *args: Any, **kwargs: Any) -> Any:
            self._statements.append(query)
            return await attr(query, *args, **kwargs)

        return counted


def _delivery(address: str, *texts: tuple[str, str]) -> Any:
    messages = [
        cloud_text(message_id, "qual o prazo?", sender=sender) for message_id, sender in texts
    ]
    return parse_cloud_api(cloud_delivery(cloud_value(address, messages)), datetime.now(UTC))


async def _ingest(settings: Settings, delivery: Any) -> tuple[Any, CountingPool]:
    pool = await create_pool(settings.database_url, min_size=1, max_size=2, app_role=WEBHOOK_ROLE)
    queue = await open_queue(settings.redis_url, settings.queue_name)
    try:
        counting = CountingPool(pool)
        report = await ingest(counting, queue, delivery)
        return report, counting
    finally:
        await queue.aclose()
        await pool.close()


async def test_a_message_is_stored_with_one_connection_and_one_statement(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await connect_number(db, org, ChannelKind.CLOUD_API, "1001")
    report, pool = await _ingest(settings, _delivery("1001", ("wamid.fd-1", "5511900000001")))
    assert report.enqueued == 1
    assert (pool.acquired, len(pool.statements)) == (1, 1)
    assert "skillet_receive_inbound" in pool.statements[0]
    [queued] = await queued_payloads(settings)
    assert (queued["message_id"], queued["contact_id"]) == ("wamid.fd-1", "5511900000001")
    assert queued["organization_id"] == str(org)

    # A redelivery: the same one statement finds it stored and open, and no second job.
    report, pool = await _ingest(settings, _delivery("1001", ("wamid.fd-1", "5511900000001")))
    assert (report.enqueued, report.duplicates) == (0, 1)
    assert (pool.acquired, len(pool.statements)) == (1, 1)


async def test_the_org_is_the_numbers_and_an_unconnected_number_stores_nothing(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org_a, org_b = await create_org(db, "A"), await create_org(db, "B")
    await connect_number(db, org_a, ChannelKind.CLOUD_API, "2001")
    await connect_number(db, org_b, ChannelKind.CLOUD_API, "2002")
    await _ingest(settings, _delivery("2002", ("wamid.fd-b", "5511900000002")))
    report, _ = await _ingest(settings, _delivery("2999", ("wamid.fd-x", "5511900000003")))
    assert (report.enqueued, report.unknown_channel) == (0, 1)
    rows = await db.fetch("select organization_id, external_id from messages order by 2")
    assert [(r["organization_id"], r["external_id"]) for r in rows] == [(org_b, "wamid.fd-b")]
    assert await db.fetchval("select count(*) from conversations") == 1
