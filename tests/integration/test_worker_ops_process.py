"""A real `skillet worker` process: its metrics endpoint, `skillet health` as a container
healthcheck would run it, and its JSON log lines."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from cli.main import main
from dev.processes import free_port
from tests.integration.ops_support import eventually, http_get, scrape, value
from tests.integration.support import SKILLET, create_org, enqueue, payload, worker_env
from worker.settings import Settings

SENT = "select count(*) from outbox where organization_id = $1 and status = 'sent'"


def _env(settings: Settings, metrics_port: int) -> dict[str, str]:
    return worker_env(
        settings,
        SKILLET_CURATOR_ENABLED="false",
        SKILLET_METRICS_PORT=str(metrics_port),
        SKILLET_HEARTBEAT_INTERVAL_S="0.5",
    )


def _start(
    env: dict[str, str], log_path: Path, out_path: Path | None = None
) -> subprocess.Popen[bytes]:
    # The child keeps its own copies of the descriptors.
    with log_path.open("wb") as log_file, (out_path or Path("/dev/null")).open("wb") as out:
        return subprocess.Popen([SKILLET, "worker"], env=env, stdout=out, stderr=log_file)


async def _malformed_request(port: int) -> None:
    """A request aiohttp refuses while parsing: it logs the error with a traceback."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
    await writer.drain()
    await reader.read()
    writer.close()
    await writer.wait_closed()


async def _skillet(env: dict[str, str], *args: str) -> int:
    done = await asyncio.to_thread(
        subprocess.run, [SKILLET, *args], env=env, capture_output=True, timeout=60, check=False
    )
    return done.returncode


async def test_worker_process_serves_metrics_health_and_json_logs(
    settings: Settings, db: asyncpg.Connection, tmp_path: Path
) -> None:
    org = await create_org(db)
    marker = uuid.uuid4().hex[:10]
    messages = [payload(org, f"p-{uuid.uuid4()}", f"quero o boleto {marker} {n}") for n in (1, 2)]
    port = free_port()
    env = _env(settings, port)
    log_path, out_path = tmp_path / "worker.log", tmp_path / "worker.out"
    worker = _start(env, log_path, out_path)
    try:

        async def serving() -> bool:
            try:
                return (await http_get(port, "/healthz"))[0] == 200
            except OSError:
                return False

        await eventually(serving, timeout_s=30)
        assert await _skillet(env, "health") == 0  # what the compose healthcheck runs
        await _malformed_request(port)

        await enqueue(settings, *messages)

        async def answered() -> bool:
            return bool(await db.fetchval(SENT, org) == 2)

        await eventually(answered, timeout_s=30)

        async def counted() -> bool:
            # A job counts as completed just after its reply is sent: wait for the counter.
            done = value(await scrape(port), "skillet_turns_completed_total", outcome="replied")
            return bool(done == 2)

        await eventually(counted, timeout_s=30)
        samples = await scrape(port)
        assert value(samples, "skillet_turns_completed_total", outcome="replied") == 2
        sent = {"result": "sent", "code": "none"}
        assert value(samples, "skillet_outbox_deliveries_total", **sent) == 2

        worker.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(worker.wait, 30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert await _skillet(env, "health") == 1  # nothing answers any more

    # JSON mode: every line is one JSON object, the libraries' own (aiohttp's) included.
    events = [json.loads(line) for line in log_path.read_text().splitlines()]
    [result] = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert result["jobs_complete"] >= 2
    [refused] = [e for e in events if e.get("logger") == "aiohttp.server"]
    assert refused["level"] == "error" and "BadHttpMessage" in refused["exception"]
    finished = [e for e in events if e["event"] == "turn.finished"]
    assert len(finished) == 2
    for event in finished:
        assert event["organization_id"] == str(org)
        assert event["conversation_id"] and event["job_id"] and event["job_try"] == 1
    assert {"worker.metrics_serving", "worker.stopped"} <= {e["event"] for e in events}
    assert marker not in log_path.read_text()  # message bodies are not logged by default


async def test_a_draining_worker_says_so_until_its_running_turn_finishes(
    settings: Settings, db: asyncpg.Connection, tmp_path: Path
) -> None:
    org = await create_org(db)
    port = free_port()
    env = _env(settings, port) | {
        "SKILLET_LOCAL_MODEL_LATENCY_MS": "3000",
        "SKILLET_JOB_COMPLETION_WAIT_S": "20",
    }
    log_path = tmp_path / "worker.log"
    worker = _start(env, log_path)
    try:
        await enqueue(settings, payload(org, f"d-{uuid.uuid4()}", "boleto"))

        async def started() -> bool:  # a worker holds the conversation: the turn runs
            held = (
                "select count(*) from conversations "
                "where organization_id = $1 and lease_token is not null"
            )
            return bool(await db.fetchval(held, org) >= 1)

        await eventually(started, timeout_s=30)
        worker.send_signal(signal.SIGTERM)

        async def draining() -> bool:
            status, body = await http_get(port, "/healthz")
            return status == 503 and json.loads(body)["status"] == "draining"

        await eventually(draining, timeout_s=5)
        samples = await scrape(port)
        assert value(samples, "skillet_worker_draining") == 1
        assert value(samples, "skillet_jobs_in_progress") == 1
        assert await asyncio.to_thread(worker.wait, 30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert await db.fetchval(SENT, org) == 1  # the running turn finished before the exit
    # The drain is logged when it starts, with the job it waits for; draining is not a failure.
    events = [json.loads(line) for line in log_path.read_text().splitlines()]
    names = [e["event"] for e in events]
    [drain] = [e for e in events if e["event"] == "worker.draining"]
    assert (drain["signal"], drain["jobs_in_progress"], drain["completion_wait_s"]) == (
        "SIGTERM",
        1,
        20,
    )
    assert names.index("worker.draining") < names.index("turn.finished")
    assert "worker.unhealthy" not in names


async def test_status_shows_a_killed_workers_job_as_orphaned(
    env: Settings, db: asyncpg.Connection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def status() -> dict[str, Any]:
        capsys.readouterr()
        assert await asyncio.to_thread(main, ["status", "--json"]) == 0
        parsed: dict[str, Any] = json.loads(capsys.readouterr().out)
        return parsed

    org = await create_org(db)
    worker_env_ = _env(env, free_port()) | {
        "SKILLET_LOCAL_MODEL_LATENCY_MS": "60000",
        # No cron job of its own may be left waiting by the kill: only the turn's job.
        "SKILLET_OUTBOX_SWEEP_ENABLED": "false",
        "SKILLET_CONVERSATION_SWEEP_ENABLED": "false",
        "SKILLET_EVENTS_DELIVERY_ENABLED": "false",
    }
    worker = _start(worker_env_, tmp_path / "worker.log")
    try:
        [job_id] = await enqueue(env, payload(org, f"k-{uuid.uuid4()}", "boleto"))

        async def running() -> bool:
            now = await status()
            workers = now["workers"]
            return bool(workers and workers[0]["job_ids"] == [job_id])

        await eventually(running, timeout_s=30)
        owned = (await status())["queue"]
        assert (owned["in_progress"], owned["orphaned"], owned["orphaned_jobs"]) == (1, 0, [])
        worker.kill()  # SIGKILL mid-turn: arq's in-progress key outlives it
        await asyncio.to_thread(worker.wait, 30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()

    async def heartbeat_expired() -> bool:
        return (await status())["workers"] == []

    await eventually(heartbeat_expired, timeout_s=10)
    queue = (await status())["queue"]
    assert (queue["in_progress"], queue["orphaned"], queue["orphaned_jobs"]) == (0, 1, [job_id])
    assert queue["waiting"] == 0  # nobody may take it before the key expires
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["status"]) == 0
    human = capsys.readouterr().out
    assert "0 in progress, 1 orphaned" in human
    assert f"orphaned (no live worker runs it): {job_id}" in human
