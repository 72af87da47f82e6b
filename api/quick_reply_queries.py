"""SQL of quick replies (respostas rápidas): an org's saved answers, by title."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class QuickReplyRow:
    id: uuid.UUID
    title: str
    text: str
    created_at: datetime
    updated_at: datetime


_COLUMNS = "id, title, text, created_at, updated_at"

# Two people saving at once must not both pass the cap: the count and the insert run under
# a per-org lock held until the caller's transaction ends.
LOCK_ORG_QUICK_REPLIES = """
select pg_advisory_xact_lock(hashtextextended('quick_replies:' || $1::uuid::text, 0))
"""
COUNT_QUICK_REPLIES = "select count(*) from quick_replies where organization_id = $1"


async def lock_count_quick_replies(conn: asyncpg.Connection, organization_id: uuid.UUID) -> int:
    """How many the org has, counted under its lock (call inside a transaction)."""
    await conn.execute(LOCK_ORG_QUICK_REPLIES, organization_id)
    return int(await conn.fetchval(COUNT_QUICK_REPLIES, organization_id))


# A title taken (case-insensitively) answers nothing: the caller says so.
INSERT_QUICK_REPLY = f"""
insert into quick_replies (id, organization_id, title, text, created_by)
values ($1, $2, $3, $4, $5)
on conflict (organization_id, lower(title)) do nothing
returning {_COLUMNS}
"""


async def insert_quick_reply(
    conn: asyncpg.Connection, organization_id: uuid.UUID, title: str, text: str, author: str
) -> QuickReplyRow | None:
    row = await conn.fetchrow(
        INSERT_QUICK_REPLY, uuid.uuid4(), organization_id, title, text, author
    )
    return None if row is None else QuickReplyRow(**dict(row))


# By title (what "/" filters on), then id; keyset (lower(title), id).
LIST_QUICK_REPLIES = f"""
select {_COLUMNS} from quick_replies
where organization_id = $1
  and ($2::text is null or (lower(title), id) > ($2, $3))
order by lower(title), id
limit $4
"""


async def list_quick_replies(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    after: tuple[str, uuid.UUID] | None,
    limit: int,
) -> list[QuickReplyRow]:
    title, last_id = after if after is not None else (None, None)
    rows = await conn.fetch(LIST_QUICK_REPLIES, organization_id, title, last_id, limit)
    return [QuickReplyRow(**dict(r)) for r in rows]


UPDATE_QUICK_REPLY = f"""
update quick_replies set title = coalesce($3, title), text = coalesce($4, text),
    updated_at = now()
where organization_id = $1 and id = $2
returning {_COLUMNS}
"""


async def update_quick_reply(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    quick_reply_id: uuid.UUID,
    *,
    title: str | None,
    text: str | None,
) -> QuickReplyRow | None:
    row = await conn.fetchrow(UPDATE_QUICK_REPLY, organization_id, quick_reply_id, title, text)
    return None if row is None else QuickReplyRow(**dict(row))


DELETE_QUICK_REPLY = f"""
delete from quick_replies where organization_id = $1 and id = $2 returning {_COLUMNS}
"""


async def delete_quick_reply(
    conn: asyncpg.Connection, organization_id: uuid.UUID, quick_reply_id: uuid.UUID
) -> QuickReplyRow | None:
    row = await conn.fetchrow(DELETE_QUICK_REPLY, organization_id, quick_reply_id)
    return None if row is None else QuickReplyRow(**dict(row))
