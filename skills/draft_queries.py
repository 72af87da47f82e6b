"""SQL of agent-authored drafts and of the org's authoring mode.

A draft is a `skill_drafts` row naming a `skill_versions` row that no pointer names. The
caller owns the transaction; every query takes the org from the caller (trusted).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import asyncpg

from skills.catalog_queries import VERSION_COLUMNS, PointedVersion, pointed_version_of


class AuthoringMode(StrEnum):
    OFF = "off"
    REVIEW = "review"
    AUTO = "auto"


class DraftStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Draft:
    id: uuid.UUID
    name: str
    status: DraftStatus
    base_version_id: uuid.UUID | None
    edits: int
    conversation_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    version: PointedVersion  # the draft's content

    def to_json(self) -> dict[str, Any]:
        """What the CLI and the API show of a draft (its content and diff come apart)."""

        def text(value: object | None) -> str | None:
            return None if value is None else str(value)

        return {
            "name": self.name,
            "draft_id": str(self.id),
            "status": self.status.value,
            "version_id": str(self.version.version_id),
            "base_version_id": text(self.base_version_id),
            "description": self.version.description,
            "edits": self.edits,
            "conversation_id": text(self.conversation_id),
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "decided_at": None if self.decided_at is None else self.decided_at.isoformat(),
            "decided_by": self.decided_by,
        }


_DRAFT_COLUMNS = f"""
d.id as draft_id, d.status, d.base_version_id, d.edits, d.conversation_id, d.created_at,
d.updated_at, d.decided_at, d.decided_by, {VERSION_COLUMNS}
"""


def _draft(row: asyncpg.Record) -> Draft:
    return Draft(
        id=row["draft_id"],
        name=row["name"],
        status=DraftStatus(row["status"]),
        base_version_id=row["base_version_id"],
        edits=row["edits"],
        conversation_id=row["conversation_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        decided_at=row["decided_at"],
        decided_by=row["decided_by"],
        version=pointed_version_of(row),
    )


FETCH_PENDING_DRAFT = f"""
select {_DRAFT_COLUMNS}
from skill_drafts d join skill_versions v on v.id = d.version_id
where d.organization_id = $1 and d.name = $2 and d.status = 'pending'
"""
LOCK_PENDING_DRAFT = FETCH_PENDING_DRAFT + "for update of d"


async def fetch_pending_draft(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> Draft | None:
    row = await conn.fetchrow(FETCH_PENDING_DRAFT, organization_id, name)
    return None if row is None else _draft(row)


async def lock_pending_draft(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> Draft | None:
    """The pending draft, row-locked until the caller's transaction ends."""
    row = await conn.fetchrow(LOCK_PENDING_DRAFT, organization_id, name)
    return None if row is None else _draft(row)


LIST_DRAFTS = f"""
select {_DRAFT_COLUMNS}
from skill_drafts d join skill_versions v on v.id = d.version_id
where d.organization_id = $1 and ($2::text is null or d.status = $2)
  and ($3::timestamptz is null or (d.updated_at, d.id) < ($3, $4))
order by d.updated_at desc, d.id desc
limit $5
"""


async def list_drafts(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    status: DraftStatus | None,
    limit: int,
    before: tuple[datetime, uuid.UUID] | None = None,
) -> list[Draft]:
    """Newest first; `before` (updated_at, id) of the last row seen pages on."""
    after_at, after_id = before if before is not None else (None, None)
    rows = await conn.fetch(LIST_DRAFTS, organization_id, status, after_at, after_id, limit)
    return [_draft(r) for r in rows]


COUNT_PENDING_DRAFTS = """
select count(*) from skill_drafts where organization_id = $1 and status = 'pending'
"""


async def count_pending_drafts(conn: asyncpg.Connection, organization_id: uuid.UUID) -> int:
    return int(await conn.fetchval(COUNT_PENDING_DRAFTS, organization_id))


INSERT_DRAFT = """
insert into skill_drafts (id, organization_id, name, version_id, base_version_id, conversation_id)
values ($1, $2, $3, $4, $5, $6)
"""


async def insert_draft(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    name: str,
    version_id: uuid.UUID,
    base_version_id: uuid.UUID | None,
    conversation_id: uuid.UUID | None,
) -> uuid.UUID:
    draft_id = uuid.uuid4()
    await conn.execute(
        INSERT_DRAFT, draft_id, organization_id, name, version_id, base_version_id, conversation_id
    )
    return draft_id


UPDATE_DRAFT_VERSION = """
update skill_drafts set version_id = $3, edits = edits + 1, updated_at = now()
where organization_id = $1 and id = $2 and status = 'pending'
"""


async def update_draft_version(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    draft_id: uuid.UUID,
    version_id: uuid.UUID,
) -> bool:
    """The agent edited its draft; False if a person decided it meanwhile."""
    status: str = await conn.execute(UPDATE_DRAFT_VERSION, organization_id, draft_id, version_id)
    return status.endswith(" 1")


UPDATE_DRAFT_DECIDED = """
update skill_drafts set status = $3, decided_at = now(), decided_by = $4, updated_at = now()
where organization_id = $1 and id = $2 and status = 'pending'
"""


async def update_draft_decided(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    draft_id: uuid.UUID,
    status: DraftStatus,
    decided_by: str,
) -> bool:
    result: str = await conn.execute(
        UPDATE_DRAFT_DECIDED, organization_id, draft_id, status.value, decided_by
    )
    return result.endswith(" 1")


FETCH_AGENT_AUTHORING = "select agent_authoring from organizations where id = $1"


async def fetch_agent_authoring(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> AuthoringMode | None:
    """The org's mode, or None for an org that does not exist."""
    value = await conn.fetchval(FETCH_AGENT_AUTHORING, organization_id)
    return None if value is None else AuthoringMode(value)


UPDATE_AGENT_AUTHORING = """
with previous as (select agent_authoring from organizations where id = $1 for update)
update organizations o set agent_authoring = $2
from previous where o.id = $1
returning previous.agent_authoring
"""


async def update_agent_authoring(
    conn: asyncpg.Connection, organization_id: uuid.UUID, mode: AuthoringMode
) -> AuthoringMode | None:
    """Set the mode; the one it replaced, or None for an org that does not exist."""
    value = await conn.fetchval(UPDATE_AGENT_AUTHORING, organization_id, mode.value)
    return None if value is None else AuthoringMode(value)
