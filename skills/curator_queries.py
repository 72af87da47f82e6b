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


# One pass over a chunk of orgs, evaluated by Postgres. $1 org ids, $2 stale cutoff,
# $3 archive cutoff. Every installed skill of the orgs gets an outcome: a skip reason from
# the gates (provenance is the installed version's created_by, then the pin), else the state
# curator_next_state (the SQL twin of skills.curator.next_state) gives. Absent usage row:
# active, unpinned, never active.
_DECIDED = """
decided as materialized (
    select d.*, d.outcome <> d.from_state and d.outcome in ('active', 'stale', 'archived')
           as moves
    from (
        select p.organization_id as org, p.name,
               coalesce(u.state, 'active') as from_state,
               u.last_activity_at as seen,
               case when v.created_by <> 'agent' then 'not-agent-created'
                    when coalesce(u.pinned, false) then 'pinned'
                    else curator_next_state(coalesce(u.state, 'active'), u.last_activity_at,
                                            $2::timestamptz, $3::timestamptz)
               end as outcome
        from skill_pointers p
        join skill_versions v on v.id = p.version_id
        left join skill_usage u
               on u.organization_id = p.organization_id and u.skill_name = p.name
        where p.organization_id = any($1::uuid[])
    ) as d
)"""

# The reports, one row per requested org (an org without skills gets empty lists), each
# list sorted by name in code-point order (collate "C", as Python sorts str).
_REPORTS = """
reports as (
    select org,
           count(*) filter (where moves) as planned,
           json_agg(json_build_object('name', name, 'from', from_state, 'to', outcome)
                     order by name collate "C") filter (where moves) as transitioned,
           json_agg(json_build_object('name', name, 'reason',
                         case when outcome in ('not-agent-created', 'pinned') then outcome
                              else 'no-change' end)
                     order by name collate "C") filter (where not moves) as skipped
    from decided group by org
), per_org as (
    select o.org, coalesce(r.planned, 0) as planned,
           coalesce(r.transitioned, '[]'::json) as transitioned,
           coalesce(r.skipped, '[]'::json) as skipped
    from unnest($1::uuid[]) as o(org) left join reports r on r.org = o.org
)"""

# The write: compare-and-set against what `decided` read (state, pin, last activity), so a
# row a turn or an operator changed since is not written and `moved` falls short of
# `planned` (the caller rolls back and redoes the chunk); revisions bumped once per org (the
# row trigger stands aside, see skillet_data/migrations/0003_curator.sql); the reports persisted.
# $4 the pass's clock, $5 trigger, $6 replayed.
RUN_CURATOR_PASS = f"""
with {_DECIDED},
moved as (
    update skill_usage u
    set state = d.outcome,
        archived_at = case when d.outcome = 'archived' then $4::timestamptz end
    from decided d
    where d.moves and u.organization_id = d.org and u.skill_name = d.name
      and u.state = d.from_state and not u.pinned
      and u.last_activity_at is not distinct from d.seen
    returning u.organization_id
), bumped as (
    insert into skill_catalog_revisions as r (organization_id)
    select organization_id from moved group by organization_id order by 1
    on conflict (organization_id) do update set revision = r.revision + 1
), {_REPORTS.strip()},
runs as (
    insert into curator_runs (organization_id, trigger, ran_at, replayed, stale_cutoff,
                              archive_cutoff, transitioned, skipped)
    select org, $5, $4, $6, $2, $3, transitioned, skipped from per_org
)
select (select count(*) from moved) as moved, org, planned,
       transitioned::text as transitioned, skipped::text as skipped
from per_org
"""

PREVIEW_CURATOR_PASS = f"""
with {_DECIDED}, {_REPORTS.strip()}
select 0::bigint as moved, org, planned,
       transitioned::text as transitioned, skipped::text as skipped
from per_org
"""

SET_REVISIONS_BUMPED_BY_STATEMENT = (
    "select set_config('skillet.revisions_bumped_by_statement', $1, true)"
)
# Sorting and hashing ~100k rows in one statement: room in memory instead of temp files.
SET_LOCAL_WORK_MEM = "select set_config('work_mem', '64MB', true)"


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
    """Decide, write and persist one chunk. Run it inside the caller's transaction (the
    trigger switch and work_mem are transaction-local); compare `moved` with `planned`."""
    await conn.fetchval(SET_REVISIONS_BUMPED_BY_STATEMENT, "on")
    await conn.fetchval(SET_LOCAL_WORK_MEM)
    rows = await conn.fetch(
        RUN_CURATOR_PASS,
        list(organization_ids),
        stale_cutoff,
        archive_cutoff,
        now,
        trigger,
        replayed,
    )
    await conn.fetchval(SET_REVISIONS_BUMPED_BY_STATEMENT, "off")
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
        PREVIEW_CURATOR_PASS, list(organization_ids), stale_cutoff, archive_cutoff
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


# Orgs with at least one installed skill; both times are index probes per org. Activity is
# the newest inbound message (its created_at is the database's clock, not a worker's).
LIST_SCHEDULE_ROWS = """
select o.id as organization_id,
       (select max(r.ran_at) from curator_runs r
        where r.organization_id = o.id and not r.replayed) as last_run_at,
       (select max(m.created_at) from messages m
        where m.organization_id = o.id and m.direction = 'inbound') as last_activity_at
from organizations o
where exists (select 1 from skill_pointers p where p.organization_id = o.id)
order by o.id
"""


async def list_schedule_rows(conn: asyncpg.Connection) -> list[ScheduleRow]:
    return [ScheduleRow(**dict(r)) for r in await conn.fetch(LIST_SCHEDULE_ROWS)]


TRY_LOCK_CURATOR_TICK = "select pg_try_advisory_lock($1, $2)"
UNLOCK_CURATOR_TICK = "select pg_advisory_unlock($1, $2)"


async def try_lock_curator_tick(conn: asyncpg.Connection) -> bool:
    """Session lock: False when another worker's tick holds it (that tick does the work)."""
    return bool(await conn.fetchval(TRY_LOCK_CURATOR_TICK, TICK_LOCK_CLASS, TICK_LOCK_ID))


async def unlock_curator_tick(conn: asyncpg.Connection) -> None:
    await conn.fetchval(UNLOCK_CURATOR_TICK, TICK_LOCK_CLASS, TICK_LOCK_ID)


# Reports written more than $1 days ago (the database's clock), oldest first, at most $2 per
# call; never an org's newest scheduled run (the schedule's last_run_at and `skillet status`
# read it). Replayed runs (`--now`) go by age alone.
PRUNE_CURATOR_RUNS = """
delete from curator_runs
where id in (
    select r.id from curator_runs r
    where r.created_at < now() - make_interval(days => $1)
      and (r.replayed or exists (
          select 1 from curator_runs n
          where n.organization_id = r.organization_id and not n.replayed and n.ran_at > r.ran_at))
    order by r.created_at
    limit $2
)
"""


async def prune_curator_runs(conn: asyncpg.Connection, keep_days: int, limit: int) -> int:
    """Delete up to `limit` reports older than `keep_days` (see PRUNE_CURATOR_RUNS); how
    many went."""
    status: str = await conn.execute(PRUNE_CURATOR_RUNS, keep_days, limit)
    return int(status.split()[-1])
