"""SQL of the skill editor: the pointer locked for a check-and-move, a skill's history, one
version of it with who made it, its usage state, and the name of the key that writes."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from skills.catalog_queries import VERSION_COLUMNS, PointedVersion, pointed_version_of
from skills.models import CreatedVia

LOCK_SKILL_POINTER = """
select version_id from skill_pointers where organization_id = $1 and name = $2 for update
"""


async def lock_skill_pointer(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> uuid.UUID | None:
    """The version the org's pointer names, its row locked until the transaction ends (None:
    no pointer; a concurrent insert then fails on the pointer's unique key)."""
    value = await conn.fetchval(LOCK_SKILL_POINTER, organization_id, name)
    return None if value is None else uuid.UUID(str(value))


@dataclass(frozen=True)
class VersionRecord:
    """One stored version of a skill with when, how and by whom it was made."""

    version: PointedVersion
    created_at: datetime
    created_via: CreatedVia
    author_key_prefix: str | None
    author_key_name: str | None


_HISTORY_COLUMNS = f"""{VERSION_COLUMNS}, v.created_at, v.created_via, v.author_key_prefix,
v.author_key_name"""


# A version someone published: not a draft or a consolidation proposal still undecided or
# turned down (their rows are versions too, but no person chose them).
_PUBLISHED = """
not exists (select 1 from skill_drafts d where d.version_id = v.id and d.status <> 'approved')
and not exists (
    select 1 from skill_proposals p where p.version_id = v.id and p.status <> 'approved'
)
"""


def _record(row: asyncpg.Record) -> VersionRecord:
    return VersionRecord(
        version=pointed_version_of(row),
        created_at=row["created_at"],
        created_via=CreatedVia(row["created_via"]),
        author_key_prefix=row["author_key_prefix"],
        author_key_name=row["author_key_name"],
    )


FETCH_SKILL_VERSION = f"""
select {_HISTORY_COLUMNS}
from skill_versions v
where v.organization_id = $1 and v.name = $2 and v.id = $3 and {_PUBLISHED}
"""


async def fetch_skill_version(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, version_id: uuid.UUID
) -> VersionRecord | None:
    """A published version of the org's skill `name` (installed or not); None for another
    skill's or another org's, or an undecided draft's."""
    row = await conn.fetchrow(FETCH_SKILL_VERSION, organization_id, name, version_id)
    return None if row is None else _record(row)


FETCH_POINTED_RECORD = f"""
select {_HISTORY_COLUMNS}
from skill_pointers p join skill_versions v on v.id = p.version_id
where p.organization_id is not distinct from $1 and p.name = $2
"""


async def fetch_pointed_record(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None, name: str
) -> VersionRecord | None:
    """The version the org's (None: the catalog's) pointer names, with its history fields."""
    row = await conn.fetchrow(FETCH_POINTED_RECORD, organization_id, name)
    return None if row is None else _record(row)


LIST_SKILL_VERSIONS = f"""
select {_HISTORY_COLUMNS}
from skill_versions v
where v.organization_id = $1 and v.name = $2
  and ($3::timestamptz is null or (v.created_at, v.id) < ($3, $4::uuid)) and {_PUBLISHED}
order by v.created_at desc, v.id desc
limit $5
"""


async def list_skill_versions(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    name: str,
    *,
    before: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[VersionRecord]:
    """The org's published versions of `name`, newest first, after the keyset `before` (the
    last one seen)."""
    stamp, ident = before if before is not None else (None, None)
    rows = await conn.fetch(LIST_SKILL_VERSIONS, organization_id, name, stamp, ident, limit)
    return [_record(r) for r in rows]


@dataclass(frozen=True)
class SkillUsageState:
    state: str
    pinned: bool


FETCH_USAGE_STATE = """
select state, pinned from skill_usage where organization_id = $1 and skill_name = $2
"""


async def fetch_usage_state(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> SkillUsageState:
    """The curator's state of the org's `name` ('active', unpinned, before any usage row)."""
    row = await conn.fetchrow(FETCH_USAGE_STATE, organization_id, name)
    if row is None:
        return SkillUsageState("active", False)
    return SkillUsageState(str(row["state"]), bool(row["pinned"]))


FETCH_API_KEY_NAME = "select name from api_keys where organization_id = $1 and id = $2"


async def fetch_api_key_name(
    conn: asyncpg.Connection, organization_id: uuid.UUID, key_id: uuid.UUID
) -> str | None:
    """The name a key was created with (None: unnamed, or not the org's)."""
    value = await conn.fetchval(FETCH_API_KEY_NAME, organization_id, key_id)
    return None if value is None else str(value)


FETCH_JUST_BEFORE_NOW = "select now() - interval '1 millisecond'"


async def fetch_just_before_now(conn: asyncpg.Connection) -> datetime:
    """A millisecond before the transaction's time: a row written first in a transaction
    that writes two versions sorts before the second in the history."""
    value: datetime = await conn.fetchval(FETCH_JUST_BEFORE_NOW)
    return value
