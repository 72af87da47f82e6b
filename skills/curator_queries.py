"""SQL of the curator: locks, the records of a set of orgs, set-wise state writes, run rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from skills.curator import SkillRecord, Transition

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


LOCK_USAGE_ROWS = """
select count(*) from (
    select 1 from skill_usage where organization_id = any($1::uuid[])
    order by organization_id, skill_name for update
) as locked
"""


async def lock_usage_rows(conn: asyncpg.Connection, organization_ids: Sequence[uuid.UUID]) -> None:
    """Row locks on the orgs' usage rows: a concurrent bump waits instead of racing a decision."""
    await conn.fetchval(LOCK_USAGE_ROWS, list(organization_ids))


LIST_CURATOR_RECORDS = """
select p.organization_id, p.name, v.created_by,
       coalesce(u.state, 'active') as state,
       coalesce(u.pinned, false) as pinned,
       u.last_activity_at
from skill_pointers p
join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = any($1::uuid[])
"""


async def list_curator_records(
    conn: asyncpg.Connection, organization_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, list[SkillRecord]]:
    """Every installed skill of the orgs with its provenance (the installed version's) and usage."""
    grouped: dict[uuid.UUID, list[SkillRecord]] = {org: [] for org in organization_ids}
    for row in await conn.fetch(LIST_CURATOR_RECORDS, list(organization_ids)):
        grouped[row["organization_id"]].append(
            SkillRecord(
                name=row["name"],
                created_by=row["created_by"],
                state=row["state"],
                pinned=row["pinned"],
                last_activity_at=row["last_activity_at"],
            )
        )
    return grouped


# Compare-and-set on the state read under the row locks; archived_at is the pass's clock.
UPDATE_USAGE_STATES = """
update skill_usage u
set state = t.to_state,
    archived_at = case when t.to_state = 'archived' then $5::timestamptz end
from unnest($1::uuid[], $2::text[], $3::text[], $4::text[])
     as t(organization_id, skill_name, from_state, to_state)
where u.organization_id = t.organization_id and u.skill_name = t.skill_name
  and u.state = t.from_state and not u.pinned
"""


async def update_usage_states(
    conn: asyncpg.Connection,
    transitions: Sequence[tuple[uuid.UUID, Transition]],
    at: datetime,
) -> int:
    """Apply (org, transition) pairs in one statement; returns how many rows changed."""
    status: str = await conn.execute(
        UPDATE_USAGE_STATES,
        [org for org, _ in transitions],
        [t.name for _, t in transitions],
        [str(t.from_state) for _, t in transitions],
        [str(t.to_state) for _, t in transitions],
        at,
    )
    return int(status.rsplit(" ", 1)[-1])


@dataclass(frozen=True)
class RunRow:
    """A report as persisted: `transitioned`/`skipped` are JSON text."""

    organization_id: uuid.UUID
    transitioned: str
    skipped: str


INSERT_CURATOR_RUNS = """
insert into curator_runs (organization_id, trigger, ran_at, replayed, stale_cutoff,
                          archive_cutoff, transitioned, skipped)
select t.organization_id, $4, $5, $6, $7, $8, t.transitioned::jsonb, t.skipped::jsonb
from unnest($1::uuid[], $2::text[], $3::text[]) as t(organization_id, transitioned, skipped)
"""


async def insert_curator_runs(
    conn: asyncpg.Connection,
    runs: Sequence[RunRow],
    *,
    trigger: str,
    ran_at: datetime,
    replayed: bool,
    stale_cutoff: datetime,
    archive_cutoff: datetime,
) -> None:
    await conn.execute(
        INSERT_CURATOR_RUNS,
        [r.organization_id for r in runs],
        [r.transitioned for r in runs],
        [r.skipped for r in runs],
        trigger,
        ran_at,
        replayed,
        stale_cutoff,
        archive_cutoff,
    )


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
