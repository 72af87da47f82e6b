"""SQL of per-conversation ordering: pending inbound messages, the commit fence, history."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg


@dataclass(frozen=True)
class InboundRow:
    id: uuid.UUID
    external_id: str
    body: str
    received_at: datetime | None
    answered_by: uuid.UUID | None


LIST_INBOUND_BY_EXTERNAL_IDS = """
select id, external_id, body, received_at, answered_by from messages
where organization_id = $1 and channel = $2 and direction = 'inbound'
  and external_id = any($3::text[])
"""


async def list_inbound_by_external_ids(
    conn: asyncpg.Connection, organization_id: uuid.UUID, channel: str, external_ids: Sequence[str]
) -> dict[str, InboundRow]:
    rows = await conn.fetch(
        LIST_INBOUND_BY_EXTERNAL_IDS, organization_id, channel, list(external_ids)
    )
    return {r["external_id"]: InboundRow(**dict(r)) for r in rows}


LOCK_CONVERSATION = "select id from conversations where id = $1 for update"


async def lock_conversation(conn: asyncpg.Connection, conversation_id: uuid.UUID) -> None:
    """Serialize reply commits of one conversation (held until the transaction ends)."""
    await conn.execute(LOCK_CONVERSATION, conversation_id)


MARK_ANSWERED = """
update messages set answered_by = $1
where id = any($2::uuid[]) and direction = 'inbound' and answered_by is null
"""


async def update_messages_answered(
    conn: asyncpg.Connection, reply_id: uuid.UUID, inbound_ids: Sequence[uuid.UUID]
) -> int:
    """Mark a burst answered by one reply; returns how many were still unanswered."""
    status: str = await conn.execute(MARK_ANSWERED, reply_id, list(inbound_ids))
    return int(status.split()[-1])


LIST_UNANSWERED_BEFORE = """
select external_id, body, sent_at, coalesce(received_at, created_at) as received_at
from messages
where conversation_id = $1 and direction = 'inbound' and answered_by is null
  and coalesce(received_at, created_at) <= $2 and not (id = any($3::uuid[]))
order by coalesce(received_at, created_at), id
"""


@dataclass(frozen=True)
class UnansweredRow:
    external_id: str
    body: str
    sent_at: datetime | None
    received_at: datetime


async def list_unanswered_before(
    conn: asyncpg.Connection,
    conversation_id: uuid.UUID,
    received_at: datetime,
    batch_ids: Sequence[uuid.UUID],
) -> list[UnansweredRow]:
    """Earlier messages of the conversation still unanswered and not in this batch (the
    order fence: a reply may not overtake them)."""
    rows = await conn.fetch(LIST_UNANSWERED_BEFORE, conversation_id, received_at, list(batch_ids))
    return [UnansweredRow(**dict(r)) for r in rows]


LIST_HISTORY = """
select direction, body from (
    select direction, body, created_at, id from messages
    where conversation_id = $1 and (direction = 'outbound' or answered_by is not null)
    order by created_at desc, id desc limit $2
) recent order by created_at, id
"""


async def list_history(
    conn: asyncpg.Connection, conversation_id: uuid.UUID, limit: int
) -> list[tuple[str, str]]:
    """Earlier answered exchange of the conversation, oldest first, for model context."""
    rows = await conn.fetch(LIST_HISTORY, conversation_id, limit)
    return [(r["direction"], r["body"]) for r in rows]
