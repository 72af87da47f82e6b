"""Deliveries/s of `skillet webhook` against a reference handler doing the same durable work.

Run: .venv/bin/python bench/webhook_ingress.py [--requests N] [--concurrency C] [--runs R]

Two servers, each its own process, on the Postgres/Redis at DATABASE_URL/REDIS_URL (a
database of its own, dropped at the end):
- `skillet webhook`, as an operator starts it (its pool switched to skillet_webhook, under
  row-level security): size cap, HMAC, JSON, parse, route to the number's org, contact
  aliases, the inbound route, the stored conversation and message, one arq job;
- the reference (`--serve-reference`, below in this file): a bare aiohttp handler that does
  the least durable work a webhook can do per delivery: HMAC check, JSON parse, one INSERT
  with the message id as idempotency key, one arq enqueue (arq's own `enqueue_job`, JSON).
One client drives both, interleaved (warm-up, then skillet, reference, skillet, ...): 32
connections, 3,000 signed single-message Cloud API deliveries from 500 customers, every
message id new. Prints each server's best rate of the runs and the ratio skillet/reference
(the floor is 0.5). Both log at WARNING (per-request INFO logging is an operator's choice).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import signal
import socket
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import aiohttp
import asyncpg
from aiohttp import web

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the payload builders live beside the tests

from bench import cpu_time  # noqa: E402
from tests.whatsapp_payloads import (  # noqa: E402
    cloud_delivery,
    cloud_signature,
    cloud_text,
    cloud_value,
    encode,
)

SECRET = "bench-app-secret"
PHONE_NUMBER_ID = "106540352242922"
CUSTOMERS = 500
PATH = "/webhooks/whatsapp"
POOL_MAX_SIZE = 10  # both servers: skillet's default SKILLET_DB_POOL_MAX_SIZE
READY_TIMEOUT_S = 30.0

REFERENCE_TABLE = """
create table if not exists reference_messages (
    external_id text primary key,
    sender text not null,
    body text not null,
    received_at timestamptz not null default now()
)
"""
REFERENCE_INSERT = """
insert into reference_messages (external_id, sender, body) values ($1, $2, $3)
on conflict (external_id) do nothing
"""


# -- the reference handler (its own process) ---------------------------------------------


async def _reference_app(database_url: str, redis_url: str, queue_name: str) -> web.Application:
    from arq import create_pool
    from arq.connections import RedisSettings

    pool = await asyncpg.create_pool(database_url, min_size=2, max_size=POOL_MAX_SIZE)
    queue = await create_pool(
        RedisSettings.from_dsn(redis_url),
        job_serializer=lambda job: json.dumps(job).encode(),
        job_deserializer=json.loads,
        default_queue_name=queue_name,
    )
    secret = SECRET.encode()

    async def deliver(request: web.Request) -> web.Response:
        body = await request.read()
        given = request.headers.get("X-Hub-Signature-256", "")
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(given, expected):
            return web.json_response({"error": "bad_signature"}, status=401)
        message = json.loads(body)["entry"][0]["changes"][0]["value"]["messages"][0]
        text = message["text"]["body"]
        async with pool.acquire() as conn:
            await conn.execute(REFERENCE_INSERT, message["id"], message["from"], text)
        job_id = f"{queue_name}:{message['id']}"
        await queue.enqueue_job("handle", {"message_id": message["id"]}, _job_id=job_id)
        return web.json_response({"enqueued": 1})

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    app = web.Application()
    app.router.add_post(PATH, deliver)
    app.router.add_get("/healthz", healthz)

    async def close(app: web.Application) -> None:
        await queue.aclose()
        await pool.close()

    app.on_cleanup.append(close)
    return app


def serve_reference(port: int, database_url: str, redis_url: str, queue_name: str) -> None:
    app = _reference_app(database_url, redis_url, queue_name)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# -- the driver --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _deliveries(count: int, run: str) -> list[tuple[bytes, str]]:
    """`count` signed single-text deliveries from CUSTOMERS customers, ids unique per run."""
    out = []
    for n in range(count):
        message = cloud_text(
            f"wamid.bench.{run}.{n}",
            f"mensagem {n}: qual o prazo de entrega?",
            sender=f"55119{n % CUSTOMERS:08d}",
            timestamp=int(time.time()),
        )
        body = encode(cloud_delivery(cloud_value(PHONE_NUMBER_ID, [message])))
        out.append((body, cloud_signature(body, SECRET)))
    return out


@dataclass(frozen=True)
class Run:
    rate: float  # deliveries per second
    p50_ms: float
    p99_ms: float
    cpu_ms: float = 0.0  # the server process's CPU per delivery (its database's not counted)
    postgres_cpu_ms: float = 0.0  # its PostgreSQL server's (this bench's database's), per delivery


async def _drive(url: str, deliveries: list[tuple[bytes, str]], concurrency: int) -> Run:
    latencies: list[float] = []
    pending = iter(deliveries)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def client() -> None:
            for body, signature in pending:
                headers = {"Content-Type": "application/json", "X-Hub-Signature-256": signature}
                started = time.perf_counter()
                async with http.post(url, data=body, headers=headers) as response:
                    answer = await response.read()
                    if response.status != 200 or json.loads(answer).get("enqueued") != 1:
                        raise RuntimeError(f"{url}: {response.status} {answer[:200]!r}")
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return Run(
        len(deliveries) / elapsed,
        latencies[len(latencies) // 2],
        latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
    )


async def _wait_ready(url: str, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise RuntimeError(f"{url}: the server exited with {process.returncode}")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url}: not ready after {READY_TIMEOUT_S} s")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds a process used so far (Linux /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _postgres_cpu_s(postmaster: int | None) -> float:
    """CPU seconds of the bench's PostgreSQL server so far (its postmaster and backends:
    bench/cpu_time.py), not of every `postgres` process of the host: a machine shared with
    other servers read their work as this bench's. 0 when the server is not on this host."""
    if postmaster is None:
        return 0.0
    return cpu_time.postgres_cpu_s(postmaster) or 0.0


@contextlib.asynccontextmanager
async def _process(argv: list[str], env: dict[str, str], health_url: str) -> AsyncIterator[int]:
    process = await asyncio.create_subprocess_exec(*argv, env=env, cwd=REPO)
    try:
        await _wait_ready(health_url, process)
        yield process.pid
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=15)
        except TimeoutError:
            process.kill()
            await process.wait()


@contextlib.asynccontextmanager
async def _database(base_url: str) -> AsyncIterator[str]:
    from core.db import with_database

    name = f"skillet_ingress_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    await admin.close()
    try:
        yield with_database(base_url, name)
    finally:
        admin = await asyncpg.connect(with_database(base_url, "postgres"))
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


async def _prepare(database_url: str) -> uuid.UUID:
    """The schema, one org with one Cloud API number, and the reference's table."""
    from channels.queries import insert_channel
    from core.channel_kind import ChannelKind
    from core.db import connect
    from core.organizations import insert_organization
    from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

    conn = await connect(database_url)
    try:
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        org = uuid.uuid4()
        await insert_organization(conn, org, "Bench")
        await insert_channel(
            conn,
            organization_id=org,
            agent_id=None,
            kind=ChannelKind.CLOUD_API,
            address=PHONE_NUMBER_ID,
            display_phone=None,
        )
        await conn.execute(REFERENCE_TABLE)
    finally:
        await conn.close()
    return org


async def _postmaster(database_url: str) -> int | None:
    conn = await asyncpg.connect(database_url)
    try:
        return await cpu_time.postmaster_pid(conn)
    finally:
        await conn.close()


async def _count_stored(database_url: str) -> tuple[int, int]:
    conn = await asyncpg.connect(database_url)
    try:
        messages = await conn.fetchval("select count(*) from messages where direction = 'inbound'")
        reference = await conn.fetchval("select count(*) from reference_messages")
        return int(messages), int(reference)
    finally:
        await conn.close()


def _env(database_url: str, redis_url: str, queue: str, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLET_")}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        SKILLET_QUEUE_NAME=queue,
        SKILLET_WEBHOOK_HOST="127.0.0.1",
        SKILLET_WEBHOOK_PORT=str(port),
        SKILLET_WHATSAPP_APP_SECRET=SECRET,
        SKILLET_WHATSAPP_VERIFY_TOKEN="bench",
        SKILLET_DB_POOL_MAX_SIZE=str(POOL_MAX_SIZE),
        SKILLET_LOG_LEVEL="WARNING",
    )
    return env


async def _main(args: argparse.Namespace) -> float:
    from dev.env import load_settings

    base = load_settings()
    skillet_bin = str(Path(sys.executable).with_name("skillet"))
    async with _database(base.database_url) as database_url:
        org = await _prepare(database_url)
        postmaster = await _postmaster(database_url)
        queue = f"bench:ingress:{uuid.uuid4().hex[:8]}"
        skillet_port, reference_port = _free_port(), _free_port()
        env = _env(database_url, base.redis_url, queue, skillet_port)
        reference_argv = [
            sys.executable,
            __file__,
            "--serve-reference",
            str(reference_port),
            database_url,
            base.redis_url,
            queue + ":reference",
        ]
        skillet_base = f"http://127.0.0.1:{skillet_port}"
        reference_base = f"http://127.0.0.1:{reference_port}"
        best: dict[str, Run] = {}
        sent = 0
        try:
            async with (
                _process([skillet_bin, "webhook"], env, skillet_base + "/healthz") as skillet_pid,
                _process(reference_argv, env, reference_base + "/healthz") as reference_pid,
            ):
                pids = {"skillet": skillet_pid, "reference": reference_pid}
                targets = {"skillet": skillet_base + PATH, "reference": reference_base + PATH}
                for label, url in targets.items():  # warm-up: pools, plans, caches
                    await _drive(url, _deliveries(200, f"warm-{label}"), args.concurrency)
                sent += 200
                for run in range(args.runs):
                    for label, url in targets.items():
                        deliveries = _deliveries(args.requests, f"{label}-{run}")
                        cpu_before = _cpu_s(pids[label])
                        pg_before = _postgres_cpu_s(postmaster)
                        result = await _drive(url, deliveries, args.concurrency)
                        per = 1000 / args.requests
                        cpu_ms = (_cpu_s(pids[label]) - cpu_before) * per
                        pg_ms = (_postgres_cpu_s(postmaster) - pg_before) * per
                        result = replace(result, cpu_ms=cpu_ms, postgres_cpu_ms=pg_ms)
                        print(
                            f"run {run + 1} {label:9} {result.rate:8.1f} deliveries/s  "
                            f"p50 {result.p50_ms:6.1f} ms  p99 {result.p99_ms:6.1f} ms  "
                            f"CPU/delivery: process {cpu_ms:4.2f} ms, postgres {pg_ms:4.2f} ms",
                            flush=True,
                        )
                        if label not in best or result.rate > best[label].rate:
                            best[label] = result
                    sent += args.requests
                stored, reference_stored = await _count_stored(database_url)
        finally:
            await _delete_queues(base.redis_url, queue, org)
    if stored != sent or reference_stored != sent:
        raise RuntimeError(f"stored {stored} / {reference_stored} of {sent} deliveries each")
    ratio = best["skillet"].rate / best["reference"].rate
    print(
        f"skillet webhook {best['skillet'].rate:.1f}/s, reference {best['reference'].rate:.1f}/s "
        f"(best of {args.runs}, {args.requests} deliveries, {args.concurrency} connections)"
    )
    print(f"webhook ingress ratio: {ratio:.2f} (floor 0.5)")
    return ratio


async def _delete_queues(redis_url: str, queue: str, org: uuid.UUID) -> None:
    """This run's queues and jobs only (the Redis may be shared)."""
    from redis.asyncio import Redis

    redis = Redis.from_url(redis_url)
    try:
        keys: list[Any] = [queue, queue + ":reference"]
        for pattern in (f"arq:job:inbound:{org}:*", f"arq:job:{queue}:reference:*"):
            async for key in redis.scan_iter(pattern, count=1000):
                keys.append(key)
        for start in range(0, len(keys), 500):
            await redis.delete(*keys[start : start + 500])
    finally:
        await redis.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--serve-reference", nargs=4, metavar=("PORT", "DSN", "REDIS", "QUEUE"))
    args = parser.parse_args(argv)
    if args.serve_reference:
        port, database_url, redis_url, queue = args.serve_reference
        serve_reference(int(port), database_url, redis_url, queue)
        return 0
    ratio = asyncio.run(_main(args))
    return 0 if ratio >= 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
