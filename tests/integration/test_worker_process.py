"""Real `skillet worker` processes: SIGKILL mid-turn and SIGTERM drain lose nothing."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid

import asyncpg

from tests.integration.support import SKILLET, create_org, enqueue, payload, worker_env
from worker.settings import Settings


def _start(settings: Settings, *args: str, **extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [SKILLET, "worker", *args],
        env=worker_env(settings, **extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def _wait_for(db: asyncpg.Connection, sql: str, *args: object, timeout_s: float = 30) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if await db.fetchval(sql, *args):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for: {sql}")


async def _wait_exit(process: subprocess.Popen[bytes], timeout_s: float) -> int:
    for _ in range(int(timeout_s / 0.1)):
        code = process.poll()
        if code is not None:
            return code
        await asyncio.sleep(0.1)
    process.kill()
    raise AssertionError("worker did not exit in time")


# A worker holds the conversation: its turn is running.
STARTED = (
    "select count(*) from conversations where organization_id = $1 and lease_token is not null"
)
REPLIES = "select count(*) from outbox where organization_id = $1 and status = 'sent'"


async def test_sigkilled_worker_mid_turn_is_answered_exactly_once(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await enqueue(settings, payload(org, f"kill-{uuid.uuid4()}", "frete?"))
    slow = {
        "SKILLET_LOCAL_MODEL_LATENCY_MS": "4000",
        "SKILLET_JOB_TIMEOUT_S": "5",  # arq re-runs a lost job after timeout + 10 s
        "SKILLET_CONVERSATION_LEASE_MS": "3000",
    }
    doomed = _start(settings, **slow)
    try:
        await _wait_for(db, STARTED, org)  # the turn is inside the (slow) model call now
        await asyncio.sleep(0.5)
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    assert await db.fetchval(REPLIES, org) == 0

    rescuer = _start(settings, "--burst", SKILLET_JOB_TIMEOUT_S="5")
    assert await _wait_exit(rescuer, timeout_s=60) == 0
    assert await db.fetchval(REPLIES, org) == 1
    outbound = await db.fetchval(
        "select count(*) from messages where organization_id = $1 and direction = 'outbound'", org
    )
    assert outbound == 1


async def test_a_killed_holder_s_conversation_is_answered_by_the_sweep_not_after_arq_s_expiry(
    settings: Settings, db: asyncpg.Connection
) -> None:
    """arq would re-run the killed job only after its in-progress key expires (job timeout
    + 10 s, 130 s by default): the conversation sweep wakes it once the lease runs out."""
    org = await create_org(db)
    await enqueue(settings, payload(org, f"kill-{uuid.uuid4()}", "frete?"))
    doomed = _start(
        settings,
        SKILLET_LOCAL_MODEL_LATENCY_MS="30000",
        SKILLET_CONVERSATION_LEASE_MS="2000",
    )
    try:
        await _wait_for(db, STARTED, org)
        await asyncio.sleep(0.5)
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait()
    rescuer = _start(settings, SKILLET_CONVERSATION_LEASE_MS="2000", SKILLET_COALESCE_MS="0")
    try:
        # Within the lease plus one sweep (every 15 s), far inside arq's 130 s.
        await _wait_for(db, REPLIES, org, timeout_s=40)
    finally:
        rescuer.send_signal(signal.SIGTERM)
        await _wait_exit(rescuer, timeout_s=30)
    assert await db.fetchval(REPLIES, org) == 1


async def test_sigterm_lets_the_running_turn_finish(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await enqueue(settings, payload(org, f"term-{uuid.uuid4()}", "boleto"))
    worker = _start(
        settings, SKILLET_LOCAL_MODEL_LATENCY_MS="2000", SKILLET_JOB_COMPLETION_WAIT_S="20"
    )
    try:
        await _wait_for(db, STARTED, org)
        worker.send_signal(signal.SIGTERM)
        assert await _wait_exit(worker, timeout_s=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
    assert await db.fetchval(REPLIES, org) == 1
