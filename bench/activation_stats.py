"""Rows a stats request reads: the daily rollup against a scan of raw activations.

Run: .venv/bin/python bench/activation_stats.py [--raw-rows 10000000 --skills 50 --days 365]
Uses the Postgres at DATABASE_URL's server (a database of its own, dropped at the end): one
org with `--raw-rows` raw `skill_activations` rows spread over `--skills` skills and `--days`
days, and the matching `skill_activation_daily` rollup. For the API's two activation queries
(one skill's last 30 days; every skill's 30-day totals) prints the rows Postgres read
(EXPLAIN ANALYZE: rows out of every scan node), next to the same answer computed from the raw
rows. The rollup must read at most one row per skill per day, however many activations.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

from api.skill_queries import LIST_ACTIVATION_DAYS, LIST_ACTIVATION_TOTALS
from core.db import connect, with_database
from dev.env import load_settings
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

FILL_RAW = """
insert into skill_activations (organization_id, skill_name, trigger, created_at)
select $1, 'skill-' || (n % $2), case when n % 5 = 0 then 'probe' else 'hard' end,
       now() - make_interval(days => (n / $2) % $3)
from generate_series(1, $4) as n
"""
FILL_DAILY = """
insert into skill_activation_daily
    (organization_id, skill_name, day, hard_count, probe_count, capped_count)
select organization_id, skill_name, (created_at at time zone 'UTC')::date,
       count(*) filter (where trigger = 'hard'), count(*) filter (where trigger = 'probe'), 0
from skill_activations where organization_id = $1
group by 1, 2, 3
"""
RAW_DAYS = """
select (created_at at time zone 'UTC')::date as day, count(*) filter (where trigger = 'hard'),
       count(*) filter (where trigger = 'probe')
from skill_activations
where organization_id = $1 and skill_name = $2
  and created_at > ($3::date - $4::int)::timestamp at time zone 'UTC'
group by 1 order by 1
"""


# A bitmap index scan hands its rows to the bitmap heap scan above it: count them once.
_NOT_READS = {"Bitmap Index Scan"}


def _rows_read(plan: Any) -> int:
    """Rows produced by the plan's table scan nodes (what was read from the tables)."""
    node = plan.get("Plan", plan)
    kind = node["Node Type"]
    reads = "Scan" in kind and kind not in _NOT_READS
    own = node["Actual Rows"] * node.get("Actual Loops", 1) if reads else 0
    return int(own + sum(_rows_read(child) for child in node.get("Plans", [])))


async def _read(conn: asyncpg.Connection, sql: str, *args: object) -> int:
    explained = await conn.fetchval(f"explain (analyze, format json) {sql}", *args)
    plan = json.loads(explained) if isinstance(explained, str) else explained
    return _rows_read(plan[0])


async def _bench(conn: asyncpg.Connection, args: argparse.Namespace) -> None:
    org = uuid.uuid4()
    await conn.execute("insert into organizations (id, name) values ($1, 'bench')", org)
    await conn.execute(FILL_RAW, org, args.skills, args.days, args.raw_rows)
    await conn.execute(FILL_DAILY, org)
    await conn.execute("analyze skill_activations; analyze skill_activation_daily")
    today = datetime.now(UTC).date()
    names = [f"skill-{n}" for n in range(args.skills)]
    one_skill = await _read(conn, LIST_ACTIVATION_DAYS, org, "skill-1", today, 30)
    totals = await _read(conn, LIST_ACTIVATION_TOTALS, org, names, today, 30)
    raw_one = await _read(conn, RAW_DAYS, org, "skill-1", today, 30)
    print(f"raw activations: {args.raw_rows:,} over {args.skills} skills and {args.days} days")
    print(f"one skill, 30 days: rollup read {one_skill} rows (bound 30); raw scan {raw_one:,}")
    print(
        f"every skill, 30 days: rollup read {totals} rows (bound {30 * args.skills}); "
        f"rows per skill per day: {totals / (30 * args.skills):.2f}"
    )
    if one_skill > 30 or totals > 30 * args.skills:
        raise SystemExit("the rollup read more than one row per skill per day")


async def _main(args: argparse.Namespace) -> None:
    base = load_settings()
    name = f"skillet_bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    try:
        conn = await connect(with_database(base.database_url, name))
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            await _bench(conn, args)
        finally:
            await conn.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--raw-rows", type=int, default=10_000_000)
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--days", type=int, default=365)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
