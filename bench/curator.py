"""Benchmark: the set-wise curator against a per-record baseline (exits 1 below the floor).

Run: .venv/bin/python bench/curator.py
100,000 installed skills with usage rows across 1,000 orgs (80% agent-authored, 3% pinned,
10% never used, the rest idle 0-150 days, 15% already stale: a first pass that moves about
55% of them), on the Postgres server of DATABASE_URL (default local); creates and drops a
database of its own. The baseline reads one record, decides with skills.curator.rules, and writes
one row per transition; the curator pass (median of 3) must end in the same states. Prints
the throughput ratio last.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.db import connect, with_database
from skills.curator import CuratorPolicy, CuratorReport, SkillRecord, plan_report
from skills.curator.run import PassOptions, run_curator_all
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

ORGS = 1_000
SKILLS_PER_ORG = 100
FLOOR = 40.0
CURATOR_REPEATS = 3  # the curator is timed thrice (median); the slow baseline once
SEED = 20_261_130
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = CuratorPolicy()


USAGE_COLUMNS = ["organization_id", "skill_name", "created_by", "use_count", "last_used_at",
                 "last_activity_at", "state", "pinned"]  # fmt: skip


def _rows(rng: random.Random) -> tuple[list[tuple], list[tuple], list[tuple], list[tuple]]:
    """Orgs, versions, pointers and usage rows; a mix of provenance, pins, states and ages."""
    orgs, versions, pointers, usage = [], [], [], []
    for o in range(ORGS):
        org = uuid.UUID(int=rng.getrandbits(128))
        orgs.append((org, f"Org {o}"))
        for s in range(SKILLS_PER_ORG):
            name, version = f"skill-{s:03d}", uuid.UUID(int=rng.getrandbits(128))
            created_by = rng.choices(["agent", "user", "platform"], [80, 15, 5])[0]
            versions.append((version, org, name, "Skill sintética", "Corpo.", created_by))
            pointers.append((org, name, version))
            # 10% never active; otherwise idle 0-150 days (so fresh, stale and archive-old).
            never = rng.random() < 0.10
            last = None if never else NOW - timedelta(days=rng.uniform(0, 150))
            state = "stale" if rng.random() < 0.15 else "active"
            usage.append((org, name, created_by, 0 if never else 1, last, last, state,
                          rng.random() < 0.03))  # fmt: skip
    return orgs, versions, pointers, usage


async def _load(conn: asyncpg.Connection) -> None:
    orgs, versions, pointers, usage = _rows(random.Random(SEED))
    await conn.copy_records_to_table("organizations", records=orgs, columns=["id", "name"])
    await conn.copy_records_to_table(
        "skill_versions",
        records=versions,
        columns=["id", "organization_id", "name", "description", "body", "created_by"],
    )
    await conn.copy_records_to_table(
        "skill_pointers", records=pointers, columns=["organization_id", "name", "version_id"]
    )
    await conn.copy_records_to_table(
        "skill_usage",
        records=usage,
        columns=USAGE_COLUMNS,
    )
    await conn.execute(
        "create table bench_snapshot as select organization_id, skill_name, state from skill_usage"
    )


async def _reset(conn: asyncpg.Connection) -> None:
    """Back to the loaded states, no run rows, fresh statistics: both passes start alike."""
    await conn.execute(
        "update skill_usage u set state = b.state, archived_at = null from bench_snapshot b "
        "where u.organization_id = b.organization_id and u.skill_name = b.skill_name "
        "and (u.state <> b.state or u.archived_at is not null)"
    )
    await conn.execute("truncate curator_runs")
    await conn.execute("vacuum analyze skill_usage")
    await conn.execute("vacuum analyze skill_catalog_revisions")
    with contextlib.suppress(asyncpg.InsufficientPrivilegeError):
        await conn.execute("checkpoint")  # no checkpoint of the previous pass's writes mid-run


async def _final_states(conn: asyncpg.Connection) -> dict[tuple[uuid.UUID, str], str]:
    rows = await conn.fetch("select organization_id, skill_name, state from skill_usage")
    return {(r["organization_id"], r["skill_name"]): r["state"] for r in rows}


BASELINE_KEYS = "select organization_id, name from skill_pointers where organization_id is not null"
BASELINE_READ = """
select v.created_by, coalesce(u.state, 'active') as state, coalesce(u.pinned, false) as pinned,
       u.last_activity_at
from skill_pointers p join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = $1 and p.name = $2
"""
BASELINE_WRITE = """
update skill_usage set state = $3,
       archived_at = case when $3 = 'archived' then $4::timestamptz end
where organization_id = $1 and skill_name = $2
"""


async def _baseline(conn: asyncpg.Connection) -> int:
    """Read one record, decide, write one row per transition (the old loop, on Postgres)."""
    stale_cutoff, archive_cutoff = POLICY.cutoffs(NOW)
    transitions = 0
    for key in await conn.fetch(BASELINE_KEYS):
        org, name = key["organization_id"], key["name"]
        row = await conn.fetchrow(BASELINE_READ, org, name)
        record = SkillRecord(name, row["created_by"], row["state"], row["pinned"],
                             row["last_activity_at"])  # fmt: skip
        for t in plan_report(org, [record], stale_cutoff, archive_cutoff).transitioned:
            await conn.execute(BASELINE_WRITE, org, name, str(t.to_state), NOW)
            transitions += 1
    return transitions


async def _bench(conn: asyncpg.Connection) -> int:
    started = time.perf_counter()
    await _load(conn)
    rows = ORGS * SKILLS_PER_ORG
    print(f"loaded {ORGS} orgs x {SKILLS_PER_ORG} skills = {rows} usage rows "
          f"in {time.perf_counter() - started:.1f} s")  # fmt: skip

    curator_runs_s = []
    reports: list[CuratorReport] = []
    for _ in range(CURATOR_REPEATS):
        await _reset(conn)
        reports = []  # the previous run's 100k report entries must not be scanned by this run's GC
        gc.collect()
        started = time.perf_counter()
        reports = await run_curator_all(conn, PassOptions(now=NOW, policy=POLICY))
        curator_runs_s.append(time.perf_counter() - started)
    curator_s = statistics.median(curator_runs_s)
    moved = sum(len(r.transitioned) for r in reports)
    curator_states = await _final_states(conn)

    await _reset(conn)
    gc.collect()
    started = time.perf_counter()
    baseline_moved = await _baseline(conn)
    baseline_s = time.perf_counter() - started
    same = curator_states == await _final_states(conn) and moved == baseline_moved

    print(f"transitions: {moved} (baseline {baseline_moved}); same final states: {same}")
    print(f"per-record baseline: {baseline_s:8.2f} s  {rows / baseline_s:10.0f} records/s")
    print(f"set-wise curator:    {curator_s:8.2f} s  {rows / curator_s:10.0f} records/s "
          f"(median of {' / '.join(f'{s:.2f}' for s in curator_runs_s)} s; "
          f"{len(reports)} run reports persisted)")  # fmt: skip
    speedup = baseline_s / curator_s
    print(f"curator speedup: {speedup:.1f}x (floor {FLOOR:.0f}x)")
    return 0 if same and speedup >= FLOOR else 1


async def main() -> int:
    configure_logging(log_format="console", level="WARNING", log_bodies=False)
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    admin = await asyncpg.connect(with_database(server, "postgres"))
    name = f"skillet_bench_{uuid.uuid4().hex[:10]}"
    await admin.execute(f'create database "{name}"')
    try:
        conn = await connect(with_database(server, name))
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            return await _bench(conn)
        finally:
            await conn.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
