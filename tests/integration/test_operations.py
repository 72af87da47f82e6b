"""Operations on a real worker: metrics after real turns, health through a cut Postgres link,
`skillet status` and `skillet health` against it."""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from cli.main import main
from dev.processes import free_port
from jobs.curator_tick import CURATOR_TICK
from jobs.queue import open_queue
from similarity.choice import backend_name
from tests.integration.curator_support import install
from tests.integration.ops_support import (
    Samples,
    eventually,
    http_get,
    running_worker,
    scrape,
    value,
)
from tests.integration.support import create_org, enqueue, enqueue_raw, payload, publish
from tests.integration.tcp_proxy import TcpProxy
from turn.local_model import LocalModel
from turn.model import ModelRequest, ModelResponse
from worker.resources import Resources
from worker.settings import Settings

SENT = "select count(*) from outbox where organization_id = $1 and status = 'sent'"


class TokenModel:
    """The local model, reporting 100 input (90 from the prompt cache) and 7 output tokens."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self._inner = LocalModel(latency_s)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self._inner.complete(request)
        return replace(response, input_tokens=100, output_tokens=7, cache_read_tokens=90)


def _ops_settings(settings: Settings, **overrides: object) -> Settings:
    return settings.model_copy(
        update={
            "metrics_port": free_port(),
            "metrics_host": "127.0.0.1",
            "curator_enabled": False,  # the tick runs when a test enqueues it
            "outbox_sweep_enabled": False,  # no cron job may sit deferred in the queue
            "conversation_sweep_enabled": False,
            "events_delivery_enabled": False,
            "heartbeat_interval_s": 0.2,
            "health_timeout_s": 1.0,
            **overrides,
        }
    )


async def _wait_count(db: asyncpg.Connection, sql: str, org: uuid.UUID, expected: int) -> None:
    async def reached() -> bool:
        return bool(await db.fetchval(sql, org) == expected)

    await eventually(reached, timeout_s=30)


async def _enqueue_curator_tick(settings: Settings) -> None:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        await redis.enqueue_job(CURATOR_TICK, _job_id=f"tick-{uuid.uuid4()}")
    finally:
        await redis.aclose()


async def test_counters_move_after_real_turns(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(
        db,
        resources.store,
        org,
        "prazos",
        keywords=["prazo"],
        references={"references/prazos.md": "Entregamos em 3 dias úteis."},
    )
    await publish(db, resources.store, org, "boleto", keywords=["boleto"], probes=["pix"])
    await install(db, org, "velha", last_activity_at=datetime.now(UTC) - timedelta(days=45))
    messages = [
        payload(org, f"m-{uuid.uuid4()}", "qual o prazo de entrega?"),
        payload(org, f"m-{uuid.uuid4()}", "vocês aceitam pix?"),
        payload(org, f"m-{uuid.uuid4()}", "bom dia"),
    ]
    ops = _ops_settings(settings)
    async with running_worker(ops, model=TokenModel()):
        port = ops.metrics_port
        await enqueue(ops, *messages)
        await _wait_count(db, SENT, org, 3)
        # A late redelivery: found stored and answered, so no job wakes it again.
        assert await enqueue(ops, messages[0]) == [None]
        await _enqueue_curator_tick(ops)

        async def settled() -> Samples | None:
            s = await scrape(port)
            done = (
                value(s, "skillet_curator_ticks_total", status="ran") == 1
                # A hard match and a probe; the served reference is a view, counted by the
                # reply's commit, not a raw activation row.
                and value(s, "skillet_activation_rows_total", result="written") == 2
            )
            return s if done else None

        await eventually(settled)
        samples = await scrape(port)
        text = (await http_get(port, "/metrics"))[1]

    assert value(samples, "skillet_turns_started_total") == 3
    assert value(samples, "skillet_turns_completed_total", outcome="replied") == 3
    assert value(samples, "skillet_turn_queue_wait_seconds_count") == 3
    assert value(samples, "skillet_turn_run_seconds_count", outcome="replied") == 3
    # No skill, a probe, and a skill that reads its reference (two model calls).
    local = {"provider": "local"}
    assert value(samples, "skillet_model_call_seconds_count", **local, result="ok") == 4
    assert value(samples, "skillet_model_tokens_total", **local, direction="input") == 400
    assert value(samples, "skillet_model_tokens_total", **local, direction="output") == 28
    assert value(samples, "skillet_model_tokens_total", **local, direction="cache_read") == 360
    assert value(samples, "skillet_turn_skills_matched_count") == 3
    assert value(samples, "skillet_turn_skills_matched_sum") == 1
    assert value(samples, "skillet_skill_probes_total") == 1
    assert value(samples, "skillet_skill_intent_matches_total") == 0  # no catalog skill here
    assert value(samples, "skillet_tool_calls_total", tool="read_skill_reference", result="ok") == 1
    assert value(samples, "skillet_outbox_deliveries_total", result="sent", code="none") == 3
    assert value(samples, "skillet_activation_rows_total", result="dropped") == 0
    assert value(samples, "skillet_activation_batch_seconds_count") >= 1
    assert value(samples, "skillet_curator_runs_total", trigger="ceiling") == 1
    transition = {"from_state": "active", "to_state": "stale"}
    assert value(samples, "skillet_curator_transitions_total", **transition) == 1
    assert value(samples, "skillet_queue_jobs", state="due") == 0
    assert value(samples, "skillet_queue_jobs", state="deferred") == 0
    assert value(samples, "skillet_jobs_in_progress") == 0
    assert value(samples, "skillet_worker_draining") == 0
    assert value(samples, "process_resident_memory_bytes") > 0
    # Labels never carry org ids, phone numbers or message text.
    for secret in (str(org), *(m.contact_id for m in messages), "prazo de entrega", "pix"):
        assert secret not in text


def _via(database_url: str, port: int) -> str:
    parts = urlsplit(database_url)
    user = parts.netloc.rpartition("@")[0]
    netloc = f"{user}@127.0.0.1:{port}" if user else f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=netloc))


async def _health(port: int) -> tuple[int, Any]:
    status, body = await http_get(port, "/healthz")
    return status, json.loads(body)


async def test_health_follows_postgres_through_a_cut_link(settings: Settings) -> None:
    target = urlsplit(settings.database_url)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 5432)
    await proxy.start()
    ops = _ops_settings(settings, database_url=_via(settings.database_url, proxy.port))
    try:
        async with running_worker(ops):
            port = ops.metrics_port
            status, body = await _health(port)
            assert status == 200 and body["status"] == "ok", body
            assert await asyncio.to_thread(main, ["health", "--port", str(port)]) == 0

            await proxy.stop()
            status, body = await _health(port)
            assert status == 503 and body["status"] == "unhealthy", body
            checks = body["checks"]
            assert checks["postgres"]["ok"] is False and checks["postgres"]["error"]
            assert checks["redis"]["ok"] is True and checks["s3"]["ok"] is True
            assert await asyncio.to_thread(main, ["health", "--port", str(port)]) == 1
            assert value(await scrape(port), "skillet_dependency_up", dependency="postgres") == 0
            assert (await http_get(port, "/livez"))[0] == 200  # alive, just not ready

            await proxy.start()  # Postgres is back, on the same address

            async def healthy() -> bool:
                return (await _health(port))[0] == 200

            await eventually(healthy, timeout_s=20)
            assert value(await scrape(port), "skillet_dependency_up", dependency="postgres") == 1
    finally:
        await proxy.stop()


@pytest.fixture
def cli_env(env: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("SKILLET_LOG_LEVEL", "WARNING")
    return env


async def _status(capsys: pytest.CaptureFixture[str]) -> Any:
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["status", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


async def test_status_shows_queue_workers_dead_letters_and_curator_runs(
    cli_env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = await create_org(db)
    await install(db, org, "velha", last_activity_at=datetime.now(UTC) - timedelta(days=45))
    await enqueue_raw(cli_env, {"not": "a payload"})  # dead-lettered as invalid_payload
    deferred = cli_env.model_copy(update={"coalesce_ms": 600_000})
    await enqueue(deferred, payload(org, f"later-{uuid.uuid4()}", "oi"))

    before = await _status(capsys)
    queue = before["queue"]
    assert (queue["waiting"], queue["in_progress"], queue["deferred"]) == (1, 0, 1)
    assert queue["oldest_waiting_s"] >= 0
    assert before["workers"] == []

    ops = _ops_settings(cli_env, metrics_port=0, local_model_latency_ms=3000)
    async with running_worker(ops) as worker:
        await enqueue(ops, payload(org, f"slow-{uuid.uuid4()}", "bom dia"))
        await _enqueue_curator_tick(ops)

        async def busy() -> bool:
            status = await _status(capsys)
            workers = status["workers"]
            return bool(
                status["queue"]["in_progress"] == 1
                and len(workers) == 1
                and workers[0]["jobs_in_progress"] == 1
                and workers[0]["healthy"] is True
            )

        await eventually(busy, timeout_s=10)
        during = await _status(capsys)
        assert worker.ctx["operations"].worker_id == during["workers"][0]["worker_id"]
        # Each live worker says which similarity backend it measures skills with.
        assert during["workers"][0]["similarity"] == backend_name(ops.similarity_config())
        assert during["workers"][0]["similarity"] in {"embedded", "embeddings", "lexical"}

        async def answered() -> bool:
            return bool(await db.fetchval(SENT, org) == 1)

        await eventually(answered, timeout_s=15)

    after = await _status(capsys)
    assert after["workers"] == []  # a stopped worker removes its heartbeat
    dead = after["dead_letters"]
    assert dead["total"] == 1 and dead["last_24h"] == 1
    assert dead["by_code"] == {"invalid_payload": 1}
    assert "payload" not in dead["latest"][0]
    curator = after["curator"]
    assert curator["organizations"] == 1 and curator["never_run"] == 0
    [last] = curator["last_runs"]
    assert last["organization_id"] == str(org) and last["trigger"] == "ceiling"
    assert last["transitioned"] == 1

    assert await asyncio.to_thread(main, ["status"]) == 0
    human = capsys.readouterr().out
    assert "workers alive: 0" in human and "dead letters: 1 total" in human
    assert after["outbox"]["pending"] == 0 and after["outbox"]["failed_24h"] == {}
    assert "outbox: 0 pending, 0 sending; failed in 24 h: none; sent but undelivered" in human


async def test_health_without_an_endpoint_or_a_worker_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await asyncio.to_thread(main, ["health"]) == 1
    assert "health_endpoint_off" in capsys.readouterr().err
    assert await asyncio.to_thread(main, ["health", "--port", str(free_port()), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["error"] == "worker_unreachable"


async def test_health_against_a_dead_port_or_a_silent_one_is_one_clear_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()
    assert await asyncio.to_thread(main, ["health", "--port", str(port)]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"error: worker_unreachable: no worker answers at http://127.0.0.1:{port}/healthz: "
        "connection refused"
    )

    # Something listens but never answers (a hung process): said so, not a repr.
    silent = socket.create_server(("127.0.0.1", 0))
    try:
        port = silent.getsockname()[1]
        argv = ["health", "--port", str(port), "--timeout", "0.2"]
        assert await asyncio.to_thread(main, argv) == 1
    finally:
        silent.close()
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"error: worker_unreachable: no worker answers at http://127.0.0.1:{port}/healthz: "
        "no answer within 0.2 s"
    )
