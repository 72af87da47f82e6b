"""The Painel's per-message counts wait in insight_pending and reach the rollups by a fold
(skillet_insight_fold): once each, by the reader's fold of its org or the worker's sweep of
every org, never into another org's rows."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime

import asyncpg

from inbox.insight_queries import fold_insight_counts
from jobs.context import JobContext
from jobs.conversation_sweep import conversation_sweep
from jobs.queue import open_queue
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

AT = datetime(2026, 11, 10, 15, 7, tzinfo=UTC)  # 12:07 in America/Sao_Paulo: quarter 48
DAY = date(2026, 11, 10)


async def conversation(db: asyncpg.Connection, org: uuid.UUID, contact: str) -> uuid.UUID:
    value = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        contact,
    )
    return uuid.UUID(str(value))


async def customer(db: asyncpg.Connection, org: uuid.UUID, conv: uuid.UUID) -> uuid.UUID:
    value = await db.fetchval(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body, received_at, created_at) "
        "values ($1, $2, 'inbound', 'whatsapp', $3, 'oi', $4, $4) returning id",
        org,
        conv,
        f"wamid.{uuid.uuid4().hex}",
        AT,
    )
    return uuid.UUID(str(value))


async def agent_reply(
    db: asyncpg.Connection, org: uuid.UUID, conv: uuid.UUID, to: uuid.UUID
) -> None:
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, body, "
        "reply_to_id, author, created_at) "
        "values ($1, $2, 'outbound', 'whatsapp', 'ok', $3, 'agent', $4)",
        org,
        conv,
        to,
        AT,
    )


async def _quarters(db: asyncpg.Connection, org: uuid.UUID) -> list[tuple[date, int, int]]:
    rows = await db.fetch(
        "select day, quarter, sum(messages)::int as n from customer_message_daily "
        "where organization_id = $1 group by day, quarter order by day, quarter",
        org,
    )
    return [(r["day"], r["quarter"], r["n"]) for r in rows]


async def _agent_replies(db: asyncpg.Connection, org: uuid.UUID) -> int:
    value = await db.fetchval(
        "select coalesce(sum(replies), 0)::int from reply_time_daily "
        "where organization_id = $1 and who = 'agent'",
        org,
    )
    return int(value)


async def test_a_messages_counts_wait_until_a_fold_and_count_once(
    db: asyncpg.Connection,
) -> None:
    org = await create_org(db, "Loja")
    conv = await conversation(db, org, "5511900000001")
    first = await customer(db, org, conv)
    await customer(db, org, conv)
    await agent_reply(db, org, conv, first)
    assert (await _quarters(db, org), await _agent_replies(db, org)) == ([], 0)

    await fold_insight_counts(db, org)
    await fold_insight_counts(db, org)  # nothing left: counted once
    assert await _quarters(db, org) == [(DAY, 48, 2)]
    assert await _agent_replies(db, org) == 1
    pending = await db.fetchval(
        "select count(*) from insight_pending where organization_id = $1", org
    )
    assert pending == 0


async def test_a_fold_of_one_org_leaves_the_others_and_a_fold_of_all_takes_them(
    db: asyncpg.Connection,
) -> None:
    mine, theirs = await create_org(db, "Minha"), await create_org(db, "Deles")
    for org in (mine, theirs):
        await customer(db, org, await conversation(db, org, "5511900000002"))

    await fold_insight_counts(db, mine)
    assert (await _quarters(db, mine), await _quarters(db, theirs)) == ([(DAY, 48, 1)], [])
    await fold_insight_counts(db, None)  # the worker's sweep
    assert (await _quarters(db, mine), await _quarters(db, theirs)) == (
        [(DAY, 48, 1)],
        [(DAY, 48, 1)],
    )


async def test_the_workers_conversation_sweep_folds_every_org(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja")
    await customer(db, org, await conversation(db, org, "5511900000003"))
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        context: JobContext = {
            "pool": resources.pool,
            "redis": redis,
            "sweep_after_s": 60.0,
            "echo_grace_s": 60.0,
        }
        swept = await conversation_sweep(context)
    finally:
        await redis.aclose()
    assert swept["status"] == "ok"
    assert await _quarters(db, org) == [(DAY, 48, 1)]
