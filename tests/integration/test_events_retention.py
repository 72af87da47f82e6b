"""The events outbox's retention: settled events (delivered, or failed after their retries)
older than SKILLET_EVENTS_RETENTION_DAYS are deleted by the hourly cron, across orgs and in
batches; anything pending (due, retrying, claimed by a delivery in flight) or recent stays."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from core.db import create_pool
from jobs.events_retention import EVENTS_RETENTION, delete_settled_events
from jobs.queue import open_queue
from tests.integration.events_support import org_with_conversation
from tests.integration.support import result_of, run_burst
from worker.settings import Settings

URL = "https://hooks.example.com/skillet"


@pytest_asyncio.fixture(loop_scope="session")
async def worker_pool(settings: Settings, db: asyncpg.Connection) -> AsyncIterator[object]:
    """A pool as the worker's group role: the retention needs no more than its grants."""
    pool = await create_pool(
        settings.database_url,
        max_size=2,
        app_role="skillet_worker",
        tenant_secret=settings.tenant_secret_value(),
    )
    yield pool
    await pool.close()


async def _event(
    db: asyncpg.Connection,
    org: uuid.UUID,
    conversation: uuid.UUID,
    *,
    status: str,
    age_days: float,
    claimed: bool = False,
) -> uuid.UUID:
    event_id = uuid.uuid4()
    await db.execute(
        "insert into org_events (id, organization_id, type, conversation_id, payload, status,"
        " attempts, claim_id, created_at, delivered_at)"
        " values ($1, $2, 'message.received', $3, '{}', $4, 1, $5,"
        " now() - make_interval(secs => $6), case when $4 = 'delivered' then now() end)",
        event_id,
        org,
        conversation,
        status,
        uuid.uuid4() if claimed else None,
        age_days * 86_400,
    )
    return event_id


async def _left(db: asyncpg.Connection) -> set[uuid.UUID]:
    return {r["id"] for r in await db.fetch("select id from org_events")}


async def test_old_settled_events_go_and_pending_or_recent_ones_stay_in_every_org(
    settings: Settings, db: asyncpg.Connection
) -> None:
    a, a_conversation = await org_with_conversation(db, URL, "Padaria A")
    b, b_conversation = await org_with_conversation(db, URL, "Padaria B")
    gone = {
        await _event(db, a, a_conversation, status="delivered", age_days=31),
        await _event(db, a, a_conversation, status="failed", age_days=45),
        await _event(db, b, b_conversation, status="delivered", age_days=400),
    }
    kept = {
        await _event(db, a, a_conversation, status="delivered", age_days=29),
        await _event(db, b, b_conversation, status="failed", age_days=1),
        # Never settled, however old: still to be delivered (or in flight right now).
        await _event(db, a, a_conversation, status="pending", age_days=60),
        await _event(db, b, b_conversation, status="pending", age_days=90, claimed=True),
    }

    # Run as the cron runs it: a real burst worker (the cron's function outside a schedule).
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        job = await redis.enqueue_job(EVENTS_RETENTION, _job_id=f"retention-{uuid.uuid4()}")
        assert job is not None
    finally:
        await redis.aclose()
    worker = await run_burst(settings.model_copy(update={"events_retention_days": 30}))

    assert await result_of(settings, job.job_id) == {
        "status": "ok",
        "deleted": 3,
        "sign_in_failures_deleted": 0,
    }
    assert await _left(db) == kept
    assert worker.ctx["metrics"].events_deleted._value.get() == 3
    assert not gone & await _left(db)


async def test_a_longer_retention_keeps_what_a_shorter_one_deletes(
    settings: Settings, db: asyncpg.Connection, worker_pool: object
) -> None:
    org, conversation = await org_with_conversation(db, URL)
    month = await _event(db, org, conversation, status="delivered", age_days=40)
    year = await _event(db, org, conversation, status="failed", age_days=400)
    assert await delete_settled_events(worker_pool, keep_days=365) == 1
    assert await _left(db) == {month}
    assert await delete_settled_events(worker_pool, keep_days=30) == 1
    assert await _left(db) == set()
    assert year not in await _left(db)


async def test_more_events_than_a_batch_go_batch_by_batch_up_to_the_runs_cap(
    db: asyncpg.Connection, worker_pool: object
) -> None:
    org, conversation = await org_with_conversation(db, URL)
    for _ in range(7):
        await _event(db, org, conversation, status="delivered", age_days=35)
    recent = await _event(db, org, conversation, status="delivered", age_days=2)

    # Two batches of 2 at most per run: the rest waits for the next run.
    assert await delete_settled_events(worker_pool, keep_days=30, batch=2, max_batches=2) == 4
    assert len(await _left(db)) == 4
    # Batches of 3 until one comes back short: 3 + 0.
    assert await delete_settled_events(worker_pool, keep_days=30, batch=3) == 3
    assert await _left(db) == {recent}
    assert await delete_settled_events(worker_pool, keep_days=30, batch=3) == 0


async def test_a_retention_under_a_day_is_refused_by_the_database(
    db: asyncpg.Connection, worker_pool: object
) -> None:
    org, conversation = await org_with_conversation(db, URL)
    await _event(db, org, conversation, status="delivered", age_days=0.5)
    for days in (0, -1):
        with pytest.raises(asyncpg.InvalidParameterValueError):
            await delete_settled_events(worker_pool, keep_days=days)
    assert len(await _left(db)) == 1
