"""Postgres owns a conversation: a lease with a fencing token, and a sweep for lost jobs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
from arq.constants import job_key_prefix

from conversation.lease import ConversationLeases, Lease
from conversation.queries import (
    CommitOutcome,
    ReplyCommit,
    TurnCounts,
    commit_turn,
    continue_conversation,
)
from core.tenancy import self_bound_connection
from jobs.context import JobContext
from jobs.conversation_sweep import conversation_sweep
from jobs.queue import open_queue
from tests.integration.support import create_org, enqueue, payload, run_burst, store_inbound
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511955550000"
REPLIES = "select count(*) from outbox where organization_id = $1 and status = 'sent'"


async def _take(
    leases: ConversationLeases, org: uuid.UUID, conversation: uuid.UUID
) -> Lease | None:
    taken = await leases.take(org, conversation, limit=50, history_limit=10)
    return None if taken is None else taken[0]


async def _let_go(pool: Any, lease: Lease) -> bool:
    """The holder's continue step with nothing to mark: True when it let go."""
    async with self_bound_connection(pool) as conn:
        step = await continue_conversation(
            conn,
            lease.organization_id,
            lease.conversation_id,
            lease.token,
            sent=None,
            limit=50,
            history_limit=10,
        )
    return step.released


async def _commit(
    pool: Any,
    org: uuid.UUID,
    conversation: uuid.UUID,
    inbound: uuid.UUID,
    token: uuid.UUID,
) -> CommitOutcome:
    async with self_bound_connection(pool) as conn:  # the worker's: it carries the proof
        committed = await commit_turn(
            conn,
            ReplyCommit(
                organization_id=org,
                conversation_id=conversation,
                channel="whatsapp",
                batch_ids=[inbound],
                first_received_at=datetime.now(UTC),
                body="resposta",
                counts=TurnCounts(),
                at=datetime.now(UTC),
                lease_token=token,
            ),
        )
    return committed.reply.outcome


async def test_a_holder_whose_lease_ran_out_cannot_commit_over_its_successor(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    conversation, inbound = await store_inbound(resources.pool, org, "m1", CONTACT)
    leases = ConversationLeases(resources.pool, ttl_s=30)
    first = await _take(leases, org, conversation)
    assert first is not None
    assert await _take(leases, org, conversation) is None  # held
    # The first holder stalls past its lease (a long GC pause, a partition).
    await db.execute("update conversations set lease_until = now() - interval '1 s'")
    second = await _take(leases, org, conversation)
    assert second is not None and second.token != first.token
    assert (
        await _commit(resources.pool, org, conversation, inbound, first.token)
        is CommitOutcome.LEASE_LOST
    )
    assert await db.fetchval("select count(*) from outbox") == 0
    assert (
        await _commit(resources.pool, org, conversation, inbound, second.token)
        is CommitOutcome.REPLIED
    )
    assert not await _let_go(resources.pool, first)  # a stale token frees nothing
    assert await _let_go(resources.pool, second)


async def test_the_holder_lets_go_only_when_nothing_waits(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    conversation, inbound = await store_inbound(resources.pool, org, "m1", CONTACT)
    leases = ConversationLeases(resources.pool, ttl_s=30)
    lease = await _take(leases, org, conversation)
    assert lease is not None
    assert not await _let_go(resources.pool, lease)  # m1 waits: the holder keeps going
    assert (
        await _commit(resources.pool, org, conversation, inbound, lease.token)
        is CommitOutcome.REPLIED
    )
    await store_inbound(
        resources.pool, org, "m2", CONTACT
    )  # committed before the release: seen by it
    assert not await _let_go(resources.pool, lease)
    await db.execute("update messages set context_at = now() where external_id = 'm2'")
    assert await _let_go(resources.pool, lease)
    assert await _take(leases, org, conversation) is not None  # free for the next job


def _sweep_context(resources: Resources, redis: Any) -> JobContext:
    return {"pool": resources.pool, "redis": redis, "sweep_after_s": 0.0, "echo_grace_s": 0.0}


async def test_a_wiped_queue_delays_a_reply_but_the_sweep_answers_it(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await enqueue(settings, payload(org, "w1", "tem horário amanhã?", CONTACT))
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        # Redis lost its data (this test's queue only: others share the server).
        for job_id in await redis.zrange(settings.queue_name, 0, -1):
            await redis.delete(job_key_prefix + job_id.decode())
        await redis.delete(settings.queue_name)
        await run_burst(settings)
        assert await db.fetchval(REPLIES, org) == 0
        assert await conversation_sweep(_sweep_context(resources, redis)) == {
            "status": "ok",
            "waiting": 1,
            "woken": 1,
            "echoes_pending": 0,
            "echoes_requeued": 0,
        }
        await run_burst(settings)
        assert await db.fetchval(REPLIES, org) == 1
        # Answered: nothing waits, nothing is woken again.
        swept = await conversation_sweep(_sweep_context(resources, redis))
        assert (swept["waiting"], swept["woken"]) == (0, 0)
    finally:
        await redis.aclose()


async def test_the_sweep_leaves_a_conversation_whose_holder_is_alive(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    conversation, _ = await store_inbound(resources.pool, org, "m1", CONTACT)
    lease = await _take(ConversationLeases(resources.pool, ttl_s=30), org, conversation)
    assert lease is not None
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        swept = await conversation_sweep(_sweep_context(resources, redis))
        assert (swept["waiting"], swept["woken"]) == (0, 0)
        await db.execute("update conversations set lease_until = now() - interval '1 s'")
        swept = await conversation_sweep(_sweep_context(resources, redis))
        assert (swept["waiting"], swept["woken"]) == (1, 1)
        again = await conversation_sweep(_sweep_context(resources, redis))
        assert again["woken"] == 0  # one job per conversation per sweep interval
    finally:
        await redis.aclose()
