"""SQL of internal notes: what the team writes for itself in a conversation's thread."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class NoteRow:
    id: uuid.UUID
    conversation_id: uuid.UUID
    author: str  # the writer's actor: `person:<uuid>`, a key's prefix, `cli`
    text: str
    created_at: datetime
    author_person_name: str | None  # the person's name, when a person wrote it


_COLUMNS = """n.id, n.conversation_id, n.author, n.text, n.created_at,
       p.name as author_person_name"""
_PERSON = """left join people p on n.author like 'person:%'
    and p.organization_id = n.organization_id and 'person:' || p.id::text = n.author"""

INSERT_NOTE = f"""
with n as (
    insert into conversation_notes (id, organization_id, conversation_id, author, text)
    values ($1, $2, $3, $4, $5)
    returning *
)
select {_COLUMNS} from n {_PERSON}
"""


async def insert_note(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    author: str,
    text: str,
) -> NoteRow:
    row = await conn.fetchrow(
        INSERT_NOTE, uuid.uuid4(), organization_id, conversation_id, author, text
    )
    assert row is not None
    return NoteRow(**dict(row))


# Oldest first, like the thread; keyset (created_at, id).
LIST_NOTES = f"""
select {_COLUMNS}
from conversation_notes n {_PERSON}
where n.organization_id = $1 and n.conversation_id = $2
  and ($3::timestamptz is null or (n.created_at, n.id) > ($3, $4))
order by n.created_at, n.id
limit $5
"""


async def list_notes(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    *,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[NoteRow]:
    at, last_id = after if after is not None else (None, None)
    rows = await conn.fetch(LIST_NOTES, organization_id, conversation_id, at, last_id, limit)
    return [NoteRow(**dict(r)) for r in rows]
