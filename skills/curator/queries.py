"""SQL of the curator: locks, one set-wise pass per chunk of orgs, schedule inputs."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

# Advisory lock namespaces (the two-int form; any constants, the same in every process).
# Per org: a curator pass holds (ORG_LOCK_CLASS, bucket of the org) for its transaction, so
# two passes over one org, or a pass and anything else that takes the org's lock, never
# interleave. Orgs share ORG_LOCK_BUCKETS buckets, so a pass over thousands of orgs holds
# at most that many locks (Postgres' lock table is small); a collision only serializes two
# unrelated orgs briefly.
ORG_LOCK_CLASS = 0x5C1_C0
ORG_LOCK_BUCKETS = 256  # a power of two: the bucket is hashtext(org) & (buckets - 1)
# The scheduler: one tick at a time across all workers.
TICK_LOCK_CLASS = 0x5C1_C1
TICK_LOCK_ID = 1

LOCK_CURATOR_ORGS = f"""
select count(pg_advisory_xact_lock($2, bucket))
from (
    select distinct hashtext(o::text) & {ORG_LOCK_BUCKETS - 1} as bucket
    from unnest($1::uuid[]) as o order by bucket
) as sorted
"""


async def lock_curator_orgs(
    conn: asyncpg.Connection, organization_ids: Sequence[uuid.UUID]
) -> None:
    """Take the orgs' curator locks until the transaction ends (sorted: no lock-order deadlock).

    Anything that must not interleave with a curator pass over an org (an import moving its
    pointers, say) takes the same lock with `lock_curator_orgs(conn, [org])`.
    """
    await conn.fetchval(LOCK_CURATOR_ORGS, list(organization_ids), ORG_LOCK_CLASS)


# One pass over a chunk of orgs, evaluated by Postgres in the narrow function
# skillet_curator_pass (the worker may not touch other orgs' rows itself): every installed
# skill of the orgs gets an outcome, transitions are written with a compare-and-set against
# what was read, and one report per org is stored; with $7 false nothing is written (a dry
# run).
# $1 org ids, $2 stale cutoff, $3 archive cutoff, $4 the pass's clock, $5 trigger, $6 replayed.
CURATOR_PASS = "select * from skillet_curator_pass($1, $2, $3, $4, $5, $6, $7)"


@dataclass(frozen=True)
class PassRows:
    """What one pass statement returns: per org, the report as JSON text."""

    moved: int  # rows the write changed (0 for a preview)
    planned: int  # transitions decided
    reports: list[tuple[uuid.UUID, str, str]]  # (org, transitioned JSON, skipped JSON)


def _pass_rows(rows: Sequence[asyncpg.Record]) -> PassRows:
    return PassRows(
        moved=int(rows[0]["moved"]) if rows else 0,
        planned=sum(int(r["planned"]) for r in rows),
        reports=[(r["org"], r["transitioned"], r["skipped"]) for r in rows],
    )


async def run_curator_pass(
    conn: asyncpg.Connection,
    organization_ids: Sequence[uuid.UUID],
    *,
    stale_cutoff: datetime,
    archive_cutoff: datetime,
    now: datetime,
    trigger: str,
    replayed: bool,
) -> PassRows:
    """Decide, write and persist one chunk. Run it inside the caller's transaction, after
    the orgs' locks; compare `moved` with `planned`."""
    rows = await conn.fetch(
        CURATOR_PASS,
        list(organization_ids),
        stale_cutoff,
        archive_cutoff,
        now,
        trigger,
        replayed,
        True,
    )
    return _pass_rows(rows)


async def preview_curator_pass(
    conn: asyncpg.Connection,
    organization_ids: Sequence[uuid.UUID],
    *,
    stale_cutoff: datetime,
    archive_cutoff: datetime,
) -> PassRows:
    """The same decisions and reports, nothing written (a dry run)."""
    rows = await conn.fetch(
        CURATOR_PASS,
        list(organization_ids),
        stale_cutoff,
        archive_cutoff,
        None,  # clock, trigger, replayed: only a stored run has them
        None,
        False,
        False,
    )
    return _pass_rows(rows)


LIST_ORGANIZATION_IDS = "select id from organizations order by id"


async def list_organization_ids(conn: asyncpg.Connection) -> list[uuid.UUID]:
    return [r["id"] for r in await conn.fetch(LIST_ORGANIZATION_IDS)]


FETCH_ORGANIZATION_EXISTS = "select exists (select 1 from organizations where id = $1)"


async def fetch_organization_exists(conn: asyncpg.Connection, organization_id: uuid.UUID) -> bool:
    return bool(await conn.fetchval(FETCH_ORGANIZATION_EXISTS, organization_id))


@dataclass(frozen=True)
class ScheduleRow:
    organization_id: uuid.UUID
    last_run_at: datetime | None
    last_activity_at: datetime | None


# Orgs with at least one installed skill, their last scheduled run and newest inbound
# message (the database's clock): a narrow function across orgs (skillet_curator_schedule).
LIST_SCHEDULE_ROWS = (
    "select organization_id, last_run_at, last_activity_at from skillet_curator_schedule()"
)


async def list_schedule_rows(conn: asyncpg.Connection) -> list[ScheduleRow]:
    return [ScheduleRow(**dict(r)) for r in await conn.fetch(LIST_SCHEDULE_ROWS)]


TRY_LOCK_CURATOR_TICK = "select pg_try_advisory_lock($1, $2)"
UNLOCK_CURATOR_TICK = "select pg_advisory_unlock($1, $2)"


async def try_lock_curator_tick(conn: asyncpg.Connection) -> bool:
    """Session lock: False when another worker's tick holds it (that tick does the work)."""
    return bool(await conn.fetchval(TRY_LOCK_CURATOR_TICK, TICK_LOCK_CLASS, TICK_LOCK_ID))


async def unlock_curator_tick(conn: asyncpg.Connection) -> None:
    await conn.fetchval(UNLOCK_CURATOR_TICK, TICK_LOCK_CLASS, TICK_LOCK_ID)


# Reports older than $1 days, at most $2 per call, never an org's newest scheduled run (the
# schedule's last_run_at and `skillet status` read it): a narrow function
# (skillet_prune_curator_runs).
PRUNE_CURATOR_RUNS = "select skillet_prune_curator_runs($1, $2)"


async def prune_curator_runs(conn: asyncpg.Connection, keep_days: int, limit: int) -> int:
    """Delete up to `limit` reports older than `keep_days`; how many went."""
    return int(await conn.fetchval(PRUNE_CURATOR_RUNS, keep_days, limit))
