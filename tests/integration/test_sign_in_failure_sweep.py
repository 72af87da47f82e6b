"""The people sign-in limit's failures are forgotten by the hourly retention: an e-mail that
failed once and never again does not keep its row forever, and the failures of the last hour
(the only ones the limit counts) stay."""

from __future__ import annotations

import hashlib
import uuid

import asyncpg

from jobs.events_retention import EVENTS_RETENTION
from jobs.queue import open_queue
from tests.integration.support import result_of, run_burst
from worker.settings import Settings


def _sha(email: str) -> bytes:
    return hashlib.sha256(email.encode()).digest()


async def _failure(db: asyncpg.Connection, email: str, age_min: float) -> None:
    await db.execute(
        "insert into person_sign_in_failures (email_sha256, failed_at)"
        " values ($1, now() - make_interval(mins => $2))",
        _sha(email),
        age_min,
    )


async def _left(db: asyncpg.Connection) -> list[tuple[bytes, int]]:
    rows = await db.fetch(
        "select email_sha256, count(*)::int as n from person_sign_in_failures"
        " group by email_sha256 order by 1"
    )
    return [(bytes(r["email_sha256"]), r["n"]) for r in rows]


async def test_the_hourly_retention_forgets_failed_sign_ins_past_the_limits_hour(
    settings: Settings, db: asyncpg.Connection
) -> None:
    await db.execute("delete from person_sign_in_failures")
    once = f"uma-vez-{uuid.uuid4().hex[:6]}@loja.com.br"
    recent = f"agora-{uuid.uuid4().hex[:6]}@loja.com.br"
    await _failure(db, once, 61)  # failed once, never again: nothing would delete it
    await _failure(db, once, 60 * 24 * 30)
    await _failure(db, recent, 5)  # still counted by the limit
    await _failure(db, recent, 59)
    await _failure(db, recent, 90)

    # Run as the cron runs it: a real burst worker (the cron's function outside a schedule).
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        job = await redis.enqueue_job(EVENTS_RETENTION, _job_id=f"retention-{uuid.uuid4()}")
        assert job is not None
    finally:
        await redis.aclose()
    await run_burst(settings)

    result = await result_of(settings, job.job_id)
    assert result["status"] == "ok" and result["sign_in_failures_deleted"] == 3
    assert await _left(db) == [(_sha(recent), 2)]
    # The limit still counts what is left: the lookup sees the e-mail's two recent failures.
    counted = await db.fetchval(
        "select failures from skillet_person_sign_in_lookup($1)", recent.upper()
    )
    assert counted == 2
