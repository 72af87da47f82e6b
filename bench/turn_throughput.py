"""Turns/s of the real worker divided by no-op arq jobs/s on the same settings and Redis.

Run: .venv/bin/python bench/turn_throughput.py [--jobs N]
Uses the Postgres at DATABASE_URL's server (a database of its own, dropped at the end), a
Redis of its own (so its command counter counts only this bench) and a private `weed mini`.
Each conversation gets one untimed message first (history, planner statistics), then the
timed one. Prints SQL statements and Redis commands per turn, the CPU a turn and a no-op job
cost in this process, Redis and (when it runs on this host) PostgreSQL (bench/cpu_time.py),
then the ratio last. The ratio moves ±20% between identical runs on a 2-vCPU VM; compare
two versions by their CPU ms per turn, run side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg
from arq import func
from arq.connections import ArqRedis, RedisSettings
from arq.worker import Worker

from core.db import connect, create_pool, with_database
from core.organizations import insert_organization
from dev.processes import free_port
from dev.weed import start_weed
from inbox.message import InboundMessage
from jobs import serialization
from jobs.queue import enqueue_inbound, open_queue
from skills.models import FileKind, SkillMatcher
from skills.publisher import SkillDraft, SkillFile, publish_skill_version
from turn.agent_queries import insert_agent
from worker import resources
from worker.app import build_worker
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.resources import open_resources
from worker.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* importable
from bench import cpu_time
from bench.private_services import start_private_redis

FLOOR = 0.5  # on a quiet machine (issue 14); a busy one reads lower
SKILLS = 500
KEYWORDS_PER_SKILL = 8
WORDS = ["frete", "boleto", "entrega", "cep", "pix", "troca", "garantia", "cartao", "nota", "prazo"]


def _keywords(n: int) -> list[str]:
    return [f"{WORDS[(n + k) % len(WORDS)]}{n}x{k}" for k in range(KEYWORDS_PER_SKILL - 1)] + [
        f"servico {n}"
    ]


async def _seed(settings: Settings) -> uuid.UUID:
    org = uuid.uuid4()
    resources = await open_resources(settings)
    conn = await connect(settings.database_url)
    try:
        await insert_organization(conn, org, "Bench")
        await insert_agent(conn, org, "Bench", "Você é o assistente de testes de carga.")
        for n in range(SKILLS):
            files = ()
            if n % 10 == 0:
                guide = SkillFile("references/guia.md", f"Guia {n}.".encode(), FileKind.REFERENCE)
                files = (guide,)
            draft = SkillDraft(
                name=f"skill-{n:04d}",
                description=f"Procedimento número {n} de atendimento",
                body=f"Corpo da skill {n}.",
                matcher=SkillMatcher(any_keywords=_keywords(n), probe_keywords=[f"sonda{n}"]),
                files=files,
            )
            await publish_skill_version(
                conn, resources.store, organization_id=org, draft=draft, created_by="user"
            )
    finally:
        await conn.close()
        await resources.close()
    return org


def _text(i: int) -> str:
    n = (i * 7) % SKILLS
    return f"Olá, bom dia! Quero saber sobre o servico {n} e a sonda{(n + 3) % SKILLS}, obrigado."


def _payload(org: uuid.UUID, i: int) -> dict[str, Any]:
    return {
        "organization_id": str(org),
        "channel": "whatsapp",
        "contact_id": f"55119{i:08d}",
        "message_id": f"bench-{uuid.uuid4()}",
        "text": _text(i),
        "sent_at": "2026-11-30T12:00:00+00:00",
    }


async def _enqueue(settings: Settings, bodies: list[dict[str, Any]], function: str) -> None:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        for body in bodies:
            await redis.enqueue_job(function, body, _job_id=f"{function}:{uuid.uuid4()}")
    finally:
        await redis.aclose()


async def _ingest(settings: Settings, bodies: list[dict[str, Any]]) -> None:
    """What the webhook does before it answers (store the message, enqueue its wakeup): not
    the worker's time, so done before the clock starts."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        for body in bodies:
            await enqueue_inbound(pool, redis, InboundMessage.model_validate(body))
    finally:
        await pool.close()
        await redis.aclose()


async def _warm_up(settings: Settings, bodies: list[dict[str, Any]]) -> None:
    """An untimed round first, as on a live deployment: every conversation has history and
    the planner has the statistics autovacuum keeps (planned on empty tables' numbers, a
    turn's statements scan an org's whole history instead of one conversation's rows)."""
    await _ingest(settings, bodies)
    await _timed(build_worker(settings, burst=True, handle_signals=False), len(bodies))
    conn = await connect(settings.database_url)
    try:
        await conn.execute("analyze")
    finally:
        await conn.close()


async def noop(ctx: dict[str, Any], payload: dict[str, Any]) -> None:
    return None


def _noop_worker(settings: Settings) -> Worker:
    return Worker(
        functions=[func(noop, name="noop", timeout=settings.job_timeout_s)],
        queue_name=settings.queue_name,
        redis_settings=RedisSettings.from_dsn(settings.redis_url),
        burst=True,
        handle_signals=False,
        max_jobs=settings.max_jobs,
        poll_delay=settings.poll_delay_s,
        keep_result=settings.keep_result_s,
        job_serializer=serialization.dumps,
        job_deserializer=serialization.loads,
    )


async def _timed(worker: Worker, expected: int) -> float:
    start = time.perf_counter()
    try:
        await worker.async_run()
    finally:
        await worker.close()
    elapsed = time.perf_counter() - start
    if worker.jobs_complete != expected:
        raise SystemExit(f"expected {expected} jobs, {worker.jobs_complete} completed")
    return elapsed


async def _measure(
    settings: Settings, org: uuid.UUID, jobs: int, postmaster: int | None
) -> tuple[float, float]:
    bodies = [_payload(org, i) for i in range(jobs)]
    noop_settings = settings.model_copy(update={"queue_name": f"bench:noop:{uuid.uuid4().hex}"})
    await _enqueue(noop_settings, bodies, "noop")
    probe = await open_queue(settings.redis_url, settings.queue_name)
    try:
        noop_commands = await _redis_commands(probe)
        noop_cpu = await cpu_time.sample(probe, postmaster)
        noop_s = await _timed(_noop_worker(noop_settings), jobs)
        noop_cpu = await cpu_time.sample(probe, postmaster) - noop_cpu
        noop_commands = await _redis_commands(probe) - noop_commands
        await _warm_up(settings, [_payload(org, i) for i in range(jobs)])
        await _ingest(settings, bodies)
        turn_commands = await _redis_commands(probe)
        turn_cpu = await cpu_time.sample(probe, postmaster)
        with _counting_statements() as counted:
            turn_s = await _timed(build_worker(settings, burst=True, handle_signals=False), jobs)
        turn_cpu = await cpu_time.sample(probe, postmaster) - turn_cpu
        turn_commands = await _redis_commands(probe) - turn_commands
    finally:
        await probe.aclose()
    print(
        f"SQL statements per turn (the worker's pool, bind/reset included): {counted[0] / jobs:.1f}"
    )
    beyond = (turn_commands - noop_commands) / jobs
    print(
        f"Redis commands per turn beyond arq's own: {beyond:.1f} "
        f"(turns {turn_commands / jobs:.1f}, no-op jobs {noop_commands / jobs:.1f}; "
        "arq polls while jobs run, so a slower job reads a little higher)"
    )
    # Work done, not time taken: comparable between runs when the wall clock is noisy.
    print(f"CPU ms per turn: {turn_cpu.per_job_ms(jobs)}")
    print(f"CPU ms per no-op job: {noop_cpu.per_job_ms(jobs)}")
    if postmaster is None:
        print("(PostgreSQL's CPU is not counted: its server does not run on this host)")
    return jobs / turn_s, jobs / noop_s


async def _redis_commands(redis: ArqRedis) -> int:
    """Commands the bench's own Redis has processed (this INFO included)."""
    stats = await redis.info("stats")
    return int(stats["total_commands_processed"])


@contextlib.contextmanager
def _counting_statements() -> Iterator[list[int]]:
    """Count every statement the worker's pool runs (asyncpg's query logger on each
    connection), by wrapping the pool factory its resources use."""
    counted = [0]
    original = resources.create_pool

    def count(_: object) -> None:
        counted[0] += 1

    async def counting_pool(*args: Any, **kwargs: Any) -> Any:
        pool = await original(*args, **kwargs)
        for holder in pool._holders:  # connections opened from now on log too (below)
            if holder._con is not None:
                holder._con.add_query_logger(count)
        pool._connect_kwargs = dict(pool._connect_kwargs)
        init = pool._init

        async def logged_init(conn: asyncpg.Connection) -> None:
            conn.add_query_logger(count)
            if init is not None:
                await init(conn)

        pool._init = logged_init
        return pool

    resources.create_pool = counting_pool  # type: ignore[assignment]
    try:
        yield counted
    finally:
        resources.create_pool = original  # type: ignore[assignment]


async def _with_database(base: Settings, jobs: int) -> float:
    name = f"skillet_bench_{uuid.uuid4().hex[:10]}"
    admin_url = with_database(base.database_url, "postgres")
    admin = await asyncpg.connect(admin_url)
    await admin.execute(f'create database "{name}"')
    settings = base.model_copy(
        update={
            "database_url": with_database(base.database_url, name),
            "queue_name": f"bench:turn:{uuid.uuid4().hex}",
            "log_level": "WARNING",
            # Coalescing defers each job's start (latency), not its cost: measure the cost.
            "coalesce_ms": 0,
        }
    )
    try:
        conn = await connect(settings.database_url)
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        await conn.close()
        org = await _seed(settings)
        postmaster = await cpu_time.postmaster_pid(admin)
        turns_per_s, noop_per_s = await _measure(settings, org, jobs, postmaster)
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    shape = f"{SKILLS} skills x {KEYWORDS_PER_SKILL} keywords"
    print(f"turns/s (local model, {shape}): {turns_per_s:.1f}")
    print(f"no-op jobs/s (same worker settings and Redis): {noop_per_s:.1f}")
    return turns_per_s / noop_per_s


def main() -> int:
    parser = argparse.ArgumentParser()
    # 2,000: at 600 the worker's own start (pools, S3 client) was a tenth of the timed run.
    parser.add_argument("--jobs", type=int, default=2000)
    args = parser.parse_args()
    from worker.logging import configure_logging

    configure_logging(level="WARNING")
    with tempfile.TemporaryDirectory() as tmp:
        access, secret = "bench", "bench-secret-key"
        weed = start_weed(Path(tmp), free_port(), access, secret)
        redis, redis_port = start_private_redis(Path(tmp))
        try:
            base = Settings(
                redis_url=f"redis://127.0.0.1:{redis_port}/0",
                s3_endpoint_url=weed.endpoint_url,
                aws_access_key_id=access,
                aws_secret_access_key=secret,
                s3_bucket="bench",
            )
            ratio = asyncio.run(_with_database(base, args.jobs))
        finally:
            redis.terminate()
            redis.wait()
            weed.stop()
    print(f"turn throughput ratio: {ratio:.2f} (floor {FLOOR})")
    return 0 if ratio >= FLOOR else 1


if __name__ == "__main__":
    raise SystemExit(main())
