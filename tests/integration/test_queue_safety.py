"""The queue carries JSON only: a pickled job planted in Redis is refused, never executed."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import asyncpg
from redis.asyncio import Redis

from tests.integration.support import create_org, enqueue, payload, run_burst
from worker.resources import Resources
from worker.settings import Settings


class _Exploit:
    """Unpickling this would create a file: proof that pickle data was executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


async def test_pickled_job_is_refused_and_the_worker_carries_on(
    settings: Settings, db: asyncpg.Connection, resources: Resources, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    planted = pickle.dumps(
        {"t": 1, "f": "handle_inbound_message", "a": [_Exploit(marker)], "k": {}, "et": 1}
    )
    client = Redis.from_url(settings.redis_url)
    try:
        await client.set("arq:job:planted", planted)
        await client.zadd(settings.queue_name, {"planted": time.time() * 1000})
    finally:
        await client.aclose()
    org = await create_org(db)
    await enqueue(settings, payload(org, "after-the-plant", "olá"))

    worker = await run_burst(settings)

    assert not marker.exists()
    assert worker.jobs_failed == 1  # the planted job, refused at deserialization
    assert worker.jobs_complete == 1  # the real message, answered
    assert await db.fetchval("select count(*) from outbox where organization_id = $1", org) == 1
