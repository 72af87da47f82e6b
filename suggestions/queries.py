"""SQL of suggestions: the threads lessons are read from, the org's recent customer messages,
dismissed groups and a draft's suggestion record. The caller binds the org and owns the
transaction; every query also filters by the org it is given."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from suggestions.lessons import ThreadMessage

# The threads of the conversations a person (or the phone) wrote in since `$2`, each message
# from `$2` minus a day (so a handoff's burst before the answer is read too), oldest first;
# at most `$3` messages (the newest conversations' first).
LIST_THREAD_MESSAGES = """
with answered as (
    select conversation_id, max(created_at) as last_at
    from messages
    where organization_id = $1 and direction = 'outbound' and author in ('person', 'phone')
      and created_at >= $2
    group by conversation_id
    order by max(created_at) desc
    limit 500
)
select m.id, m.conversation_id, m.direction, m.author, m.author_key_prefix, m.kind, m.body,
       -- The phone's message is stored when its echo is settled, a grace after it was sent:
       -- when it was sent (the provider's stamp) tells an automatic reply apart.
       case when m.author = 'phone' then coalesce(m.sent_at, m.created_at)
            else coalesce(m.received_at, m.created_at) end as at,
       (m.direction = 'outbound' and m.reply_to_id is not null) as turn_reply,
       c.contact_name
from messages m join answered a on a.conversation_id = m.conversation_id
join conversations c on c.id = m.conversation_id
where m.organization_id = $1 and coalesce(m.received_at, m.created_at) >= $2 - interval '1 day'
order by a.last_at desc, m.conversation_id, coalesce(m.received_at, m.created_at), m.id
limit $3
"""


async def list_thread_messages(
    conn: asyncpg.Connection, organization_id: uuid.UUID, since: datetime, limit: int
) -> list[ThreadMessage]:
    rows = await conn.fetch(LIST_THREAD_MESSAGES, organization_id, since, limit)
    return [
        ThreadMessage(
            id=r["id"],
            conversation_id=r["conversation_id"],
            direction=r["direction"],
            author=r["author"],
            author_key_prefix=r["author_key_prefix"],
            kind=r["kind"],
            body=r["body"],
            at=r["at"],
            turn_reply=r["turn_reply"],
            contact_name=r["contact_name"],
        )
        for r in rows
    ]


LIST_FIXED_TEXTS = """
select t from agents a,
     unnest(array[a.handoff_ack, a.handoff_wait_notice]) as t
where a.organization_id = $1 and t is not null
"""


async def list_fixed_texts(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[str]:
    """The org's agents' own acknowledgement and waiting texts."""
    return [r["t"] for r in await conn.fetch(LIST_FIXED_TEXTS, organization_id)]


LIST_CUSTOMER_TEXTS = """
select left(body, 2000) as body from messages
where organization_id = $1 and direction = 'inbound' and kind = 'text'
  and coalesce(received_at, created_at) >= $2 and not (id = any($3::uuid[]))
order by coalesce(received_at, created_at) desc, id desc
limit $4
"""


async def list_customer_texts(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    since: datetime,
    excluded: Sequence[uuid.UUID],
    limit: int,
) -> list[str]:
    """The org's customer text messages since `since`, newest first, but `excluded`."""
    rows = await conn.fetch(LIST_CUSTOMER_TEXTS, organization_id, since, list(excluded), limit)
    return [r["body"] for r in rows]


@dataclass(frozen=True)
class Dismissal:
    group_id: uuid.UUID
    lesson_ids: frozenset[uuid.UUID]


LIST_DISMISSALS = """
select group_id, lesson_ids from suggestion_dismissals where organization_id = $1
"""


async def list_dismissals(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> dict[uuid.UUID, Dismissal]:
    rows = await conn.fetch(LIST_DISMISSALS, organization_id)
    return {r["group_id"]: Dismissal(r["group_id"], frozenset(r["lesson_ids"])) for r in rows}


UPSERT_DISMISSAL = """
insert into suggestion_dismissals (organization_id, group_id, lesson_ids, dismissed_by)
values ($1, $2, $3, $4)
on conflict (organization_id, group_id)
do update set lesson_ids = excluded.lesson_ids, dismissed_by = excluded.dismissed_by,
              dismissed_at = now()
"""


async def upsert_dismissal(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    group_id: uuid.UUID,
    lesson_ids: Sequence[uuid.UUID],
    actor: str,
) -> None:
    await conn.execute(UPSERT_DISMISSAL, organization_id, group_id, list(lesson_ids), actor)


UPDATE_DRAFT_SUGGESTION = """
update skill_drafts set suggestion = $3::jsonb
where organization_id = $1 and id = $2
"""


async def update_draft_suggestion(
    conn: asyncpg.Connection, organization_id: uuid.UUID, draft_id: uuid.UUID, record: Any
) -> None:
    await conn.execute(UPDATE_DRAFT_SUGGESTION, organization_id, draft_id, record)


FETCH_DRAFT_SUGGESTION = """
select id, suggestion from skill_drafts
where organization_id = $1 and name = $2 and status = 'pending'
"""


async def fetch_draft_suggestion(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> tuple[uuid.UUID, dict[str, Any]] | None:
    """The pending draft's id and its suggestion record (None: no such draft, or not one
    made from a suggestion)."""
    row = await conn.fetchrow(FETCH_DRAFT_SUGGESTION, organization_id, name)
    if row is None or row["suggestion"] is None:
        return None
    value = row["suggestion"]
    return row["id"], dict(value)


FETCH_PENDING_GROUP_DRAFT = """
select name from skill_drafts
where organization_id = $1 and status = 'pending' and suggestion->>'group_id' = $2
order by created_at, id
limit 1
"""


async def fetch_pending_group_draft(
    conn: asyncpg.Connection, organization_id: uuid.UUID, group_id: str
) -> str | None:
    """The pending draft already made from that group, if any."""
    name: str | None = await conn.fetchval(FETCH_PENDING_GROUP_DRAFT, organization_id, group_id)
    return name
