"""A Redis restart under a running worker: it reconnects and keeps answering."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from dev.processes import free_port
from tests.integration.support import create_org, enqueue, payload
from tests.integration.test_worker_process import _start, _wait_for
from worker.settings import Settings


def _redis(port: int, directory: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port = free_port()
    yield port, tmp_path


REPLIED = """
select count(*) from messages i join outbox o on o.message_id = i.answered_by
where i.organization_id = $1 and i.external_id = $2 and o.status = 'sent'
"""


async def _wait_redis(port: int) -> None:
    for _ in range(100):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            await writer.wait_closed()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise AssertionError("redis did not start")


async def test_worker_reconnects_after_redis_restarts(
    settings: Settings, db: asyncpg.Connection, private_redis: tuple[int, Path]
) -> None:
    port, directory = private_redis
    settings = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{port}/0"})
    redis = _redis(port, directory)
    worker = None
    try:
        await _wait_redis(port)
        org = await create_org(db)
        worker = _start(settings)
        await enqueue(settings, payload(org, "before", "oi"))
        await _wait_for(db, REPLIED, org, "before")

        redis.send_signal(signal.SIGKILL)  # a crash: everything in it is gone
        redis.wait()
        await asyncio.sleep(1.0)
        redis = _redis(port, directory)
        await _wait_redis(port)

        await enqueue(settings, payload(org, f"after-{uuid.uuid4()}", "oi de novo"))
        answered = await db.fetchval(
            "select answered_by from messages where organization_id = $1 "
            "and external_id like 'after-%'",
            org,
        )
        assert answered is None  # stored by the enqueue: only the worker can answer it
        await _wait_for(
            db,
            "select count(*) from messages i join outbox o on o.message_id = i.answered_by "
            "where i.organization_id = $1 and i.external_id like 'after-%' and o.status = 'sent'",
            org,
            timeout_s=60,
        )
        assert worker.poll() is None  # the same process, never restarted
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        redis.send_signal(signal.SIGKILL)
        redis.wait()
