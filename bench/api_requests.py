"""Requests/s of an authenticated admin API read divided by the same app's /healthz.

Run: .venv/bin/python bench/api_requests.py [--requests N] [--concurrency C]
`GET /v1/skills` with a bearer key pays for everything a read pays: the key's sha256, the
security-definer lookup on one pooled connection (as skillet_api), the org binding of a
second one, the listing of 30 installed skills under row-level security, JSON. `/healthz` is
the same aiohttp app answering with no key and no database: what any request pays for HTTP
alone. Both on 127.0.0.1 behind the same client, interleaved; on the Postgres/Redis at
DATABASE_URL/REDIS_URL (a database of its own, dropped at the end). Also counts how many
times the key's last_used_at was written (at most once a minute, whatever the traffic).
Prints the ratio last.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import UTC, datetime

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import aiohttp
import asyncpg

from api.app import build_app
from api.key_queries import insert_api_key
from api.keys import Role, mint_key
from api.routing import ApiDeps
from core.db import connect, create_pool, with_database
from core.organizations import insert_organization
from dev.env import load_settings
from skills.models import SkillMatcher
from skills.publisher import SkillDraft, insert_version_and_pointer
from skills.usage import UsageStore
from webhook.server import start_site
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.settings import Settings

SKILLS = 30


async def _load(
    url: str, headers: dict[str, str], requests: int, concurrency: int
) -> tuple[float, list[float]]:
    """(requests/s, latencies in ms) of `requests` GETs, `concurrency` in flight."""
    latencies: list[float] = []
    left = [requests]
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:

        async def client() -> None:
            while left[0] > 0:
                left[0] -= 1
                started = time.perf_counter()
                async with http.get(url, headers=headers) as response:
                    await response.read()
                    assert response.status == 200, response.status
                latencies.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return requests / elapsed, latencies


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def _seed(conn: asyncpg.Connection) -> tuple[uuid.UUID, str]:
    org = uuid.uuid4()
    await insert_organization(conn, org, "Bench")
    for n in range(SKILLS):
        draft = SkillDraft(
            name=f"skill-{n:02d}",
            description=f"Skill {n}",
            body=f"Resposta {n}.",
            matcher=SkillMatcher(any_keywords=[f"palavra{n}"]),
            files=(),
        )
        await insert_version_and_pointer(
            conn, version_id=uuid.uuid4(), organization_id=org, draft=draft, created_by="user"
        )
    minted = mint_key()
    await insert_api_key(conn, org, minted, Role.VIEWER, "bench")
    return org, minted.key


async def _main(args: argparse.Namespace, base: Settings) -> float:
    name = f"skillet_api_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    await admin.close()
    database_url = with_database(base.database_url, name)
    try:
        conn = await connect(database_url)
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        _, key = await _seed(conn)
        pool = await create_pool(database_url, min_size=2, max_size=10, app_role="skillet_api")

        def clock() -> datetime:
            return datetime.now(UTC)

        deps = ApiDeps(pool=pool, store=None, queue=None, clock=clock, usage=UsageStore(clock))  # type: ignore[arg-type]
        runner, port = await start_site(build_app(deps), "127.0.0.1", 0)
        base_url = f"http://127.0.0.1:{port}"
        targets = {
            "v1/skills": (f"{base_url}/v1/skills", {"Authorization": f"Bearer {key}"}),
            "healthz": (f"{base_url}/healthz", {}),
        }
        stamps_before = await conn.fetchval(
            "select n_tup_upd from pg_stat_user_tables where relname = 'api_keys'"
        )
        try:
            for url, headers in targets.values():  # warm up
                await _load(url, headers, 200, args.concurrency)
            rates: dict[str, list[float]] = {label: [] for label in targets}
            latencies: dict[str, list[float]] = {label: [] for label in targets}
            for _ in range(args.rounds):  # interleaved, so machine noise hits both alike
                for label, (url, headers) in targets.items():
                    rate, lat = await _load(url, headers, args.requests, args.concurrency)
                    rates[label].append(rate)
                    latencies[label].extend(lat)
        finally:
            await runner.cleanup()
            await pool.close()
        await asyncio.sleep(0.6)  # statistics are flushed to the collector every 500 ms
        stamps = await conn.fetchval(
            "select n_tup_upd from pg_stat_user_tables where relname = 'api_keys'"
        )
        await conn.close()
    finally:
        admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    for label in targets:
        lat = latencies[label]
        print(
            f"{label:10} {statistics.median(rates[label]):8.1f} req/s  "
            f"p50 {_percentile(lat, 0.50):6.1f} ms  p99 {_percentile(lat, 0.99):6.1f} ms"
        )
    total = args.rounds * args.requests + 200
    print(
        f"api_keys rows updated (last_used_at) over {total} keyed requests: "
        f"{stamps - stamps_before}"
    )
    ratio = statistics.median(rates["v1/skills"]) / statistics.median(rates["healthz"])
    print(
        f"api read throughput ratio: {ratio:.2f} "
        f"(key lookup + RLS + {SKILLS} skills / bare /healthz)"
    )
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    configure_logging(level="WARNING")
    asyncio.run(_main(args, load_settings()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
