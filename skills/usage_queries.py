"""SQL of the usage store: set-wise counter increments, one record, pin and restore."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class UsageRecord:
    """One org's telemetry for one skill (a row of `skill_usage`)."""

    organization_id: uuid.UUID
    skill_name: str
    created_by: str
    use_count: int
    view_count: int
    patch_count: int
    last_used_at: datetime | None
    last_viewed_at: datetime | None
    last_patched_at: datetime | None
    restored_at: datetime | None
    last_activity_at: datetime | None
    state: str
    pinned: bool
    archived_at: datetime | None


_COLUMNS = """organization_id, skill_name, created_by, use_count, view_count, patch_count,
    last_used_at, last_viewed_at, last_patched_at, restored_at, last_activity_at, state,
    pinned, archived_at"""


def _record(row: asyncpg.Record) -> UsageRecord:
    return UsageRecord(**{name: row[name] for name in UsageRecord.__dataclass_fields__})


@dataclass(frozen=True)
class CounterDelta:
    """Increments for one (org, skill) key; several events of a batch already summed."""

    organization_id: uuid.UUID
    skill_name: str
    uses: int = 0
    views: int = 0
    patches: int = 0


# One statement per batch; the increment itself lives in SQL
# (`skillet_bump_usage`), which the reply commit calls too.
UPSERT_USAGE_COUNTERS = """
select skillet_bump_usage($1::uuid[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[],
                          $6::timestamptz)
"""


async def upsert_usage_counters(
    conn: asyncpg.Connection, deltas: Sequence[CounterDelta], at: datetime
) -> None:
    """Add `deltas` (unique keys, in a stable order so concurrent batches lock alike) at `at`."""
    await conn.execute(
        UPSERT_USAGE_COUNTERS,
        [d.organization_id for d in deltas],
        [d.skill_name for d in deltas],
        [d.uses for d in deltas],
        [d.views for d in deltas],
        [d.patches for d in deltas],
        at,
    )


FETCH_USAGE = f"""
select {_COLUMNS} from skill_usage where organization_id = $1 and skill_name = $2
"""


async def fetch_usage(
    conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str
) -> UsageRecord | None:
    row = await conn.fetchrow(FETCH_USAGE, organization_id, skill_name)
    return None if row is None else _record(row)


# Only an installed skill (a pointer of the org) can be pinned or restored; the insert branch
# covers a skill that never had telemetry.
UPDATE_USAGE_PINNED = f"""
insert into skill_usage as u (organization_id, skill_name, created_by, pinned)
select p.organization_id, p.name, v.created_by, $3
from skill_pointers p join skill_versions v on v.id = p.version_id
where p.organization_id = $1 and p.name = $2
on conflict (organization_id, skill_name) do update set pinned = excluded.pinned
returning {_COLUMNS}
"""


async def update_usage_pinned(
    conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str, pinned: bool
) -> UsageRecord | None:
    """Set `pinned`; None when the org has no skill installed under that name."""
    row = await conn.fetchrow(UPDATE_USAGE_PINNED, organization_id, skill_name, pinned)
    return None if row is None else _record(row)


FETCH_USAGE_STATE_FOR_UPDATE = """
select state, absorbed_into from skill_usage
where organization_id = $1 and skill_name = $2 for update
"""


async def fetch_usage_state_for_update(
    conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str
) -> tuple[str | None, str | None]:
    """The row's state and the umbrella it was absorbed into, locked until the transaction
    ends ((None, None): no usage row yet)."""
    row = await conn.fetchrow(FETCH_USAGE_STATE_FOR_UPDATE, organization_id, skill_name)
    return (None, None) if row is None else (row["state"], row["absorbed_into"])


# An import of the skill is activity: a stale or archived one is active again (no row, or an
# active one, is left as it is). Returns the state it left, or nothing.
REACTIVATE_USAGE = """
with previous as (
    select state from skill_usage
    where organization_id = $1 and skill_name = $2 and state <> 'active'
    for update
)
update skill_usage u set
    state = 'active',
    archived_at = null,
    absorbed_into = null,
    restored_at = now(),
    last_activity_at = greatest(u.last_activity_at, now())
from previous
where u.organization_id = $1 and u.skill_name = $2
returning previous.state
"""


async def reactivate_usage(
    conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str
) -> str | None:
    """Make a stale/archived skill active; the state it had, or None if nothing changed."""
    state: str | None = await conn.fetchval(REACTIVATE_USAGE, organization_id, skill_name)
    return state


UPDATE_USAGE_RESTORED = f"""
insert into skill_usage as u
    (organization_id, skill_name, created_by, restored_at, last_activity_at)
select p.organization_id, p.name, v.created_by, $3, $3
from skill_pointers p join skill_versions v on v.id = p.version_id
where p.organization_id = $1 and p.name = $2
on conflict (organization_id, skill_name) do update set
    state = 'active',
    archived_at = null,
    absorbed_into = null,
    restored_at = excluded.restored_at,
    last_activity_at = greatest(u.last_activity_at, excluded.last_activity_at)
returning {_COLUMNS}
"""


async def update_usage_restored(
    conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str, at: datetime
) -> UsageRecord | None:
    """Active again, activity stamped at `at`; None when the skill is not installed."""
    row = await conn.fetchrow(UPDATE_USAGE_RESTORED, organization_id, skill_name, at)
    return None if row is None else _record(row)
