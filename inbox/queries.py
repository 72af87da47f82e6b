"""SQL of inbound messages: store one (with its conversation) once, read what became of it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

FETCH_INBOUND_STATE = """
select answered_by is not null as answered, expects_reply, context_at is not null as context
from messages where id = $1
"""


async def fetch_inbound_state(
    conn: asyncpg.Connection, inbound_id: uuid.UUID
) -> tuple[bool, bool, bool] | None:
    """(answered, expects_reply, kept as context) of one message, or None if unknown."""
    row = await conn.fetchrow(FETCH_INBOUND_STATE, inbound_id)
    return None if row is None else (row["answered"], row["expects_reply"], row["context"])


PERSIST_INBOUND = """
with existing as (
    select id from conversations
    where organization_id = $1 and channel = $2 and contact_id = $3
), created as (
    -- No ON CONFLICT DO UPDATE: it would lock the conversation row on every message and
    -- deadlock against a reply commit holding it.
    insert into conversations (organization_id, channel, contact_id)
    select $1, $2, $3 where not exists (select 1 from existing)
    on conflict (organization_id, channel, contact_id) do nothing
    returning id
), conv as (
    select id from existing union all select id from created
), ins as (
    insert into messages
        (organization_id, conversation_id, direction, channel, external_id, body, sent_at,
         received_at, kind, expects_reply, agent_id)
    select $1, conv.id, 'inbound', $2, $4, $5, $6, $7, $8, $9, $10 from conv
    on conflict (organization_id, channel, external_id) where direction = 'inbound' do nothing
    returning id
)
select conv.id as conversation_id,
       coalesce((select id from ins), m.id) as inbound_id,
       exists (select 1 from ins) as created,
       m.answered_by is null and m.context_at is null as open,
       m.conversation_id as stored_conversation_id,
       o.status as outbox_status
from conv
left join messages m
    on m.organization_id = $1 and m.channel = $2 and m.external_id = $4
   and m.direction = 'inbound'
left join outbox o on o.message_id = m.answered_by
"""


@dataclass(frozen=True)
class PersistedInbound:
    conversation_id: uuid.UUID
    inbound_id: uuid.UUID
    # The reply's outbox status when the message was already answered ('pending': committed
    # but not yet handed to its channel, so its conversation is woken to deliver it).
    outbox_status: str | None
    # Where the message was already stored (None: stored by this call). Another conversation
    # than conversation_id means its id came before from another contact.
    stored_conversation_id: uuid.UUID | None = None
    created: bool = True  # False: the message was stored before (a redelivery)
    open: bool | None = None  # stored before and still waiting (None: stored by this call)

    @property
    def foreign(self) -> bool:
        """The message id belongs to another contact's conversation."""
        stored = self.stored_conversation_id
        return stored is not None and stored != self.conversation_id


async def upsert_inbound(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    channel: str,
    contact_id: str,
    external_id: str,
    body: str,
    sent_at: datetime,
    received_at: datetime,
    kind: str = "text",
    expects_reply: bool = True,
    agent_id: uuid.UUID | None = None,
) -> PersistedInbound:
    """Conversation + message (once) + what became of a copy stored before, in one trip.

    An unknown organization fails the conversation's foreign key
    (asyncpg.ForeignKeyViolationError).
    """
    args = (
        organization_id,
        channel,
        contact_id,
        external_id,
        body,
        sent_at,
        received_at,
        kind,
        expects_reply,
        agent_id,
    )
    row = await conn.fetchrow(PERSIST_INBOUND, *args)
    if row is None:
        # Another job created the conversation concurrently, after this statement's
        # snapshot: it is committed now, so a second try sees it.
        row = await conn.fetchrow(PERSIST_INBOUND, *args)
    return PersistedInbound(**dict(row))


FETCH_INBOUND_CONTACT_ID = """
select c.contact_id from messages m join conversations c on c.id = m.conversation_id
where m.organization_id = $1 and m.channel = $2 and m.external_id = $3
  and m.direction = 'inbound'
"""


async def fetch_inbound_contact_id(
    conn: asyncpg.Connection, organization_id: uuid.UUID, channel: str, external_id: str
) -> str | None:
    """The contact whose conversation holds the stored inbound message, or None if the
    message id was never stored (inbound ids are unique per org and channel)."""
    contact_id: str | None = await conn.fetchval(
        FETCH_INBOUND_CONTACT_ID, organization_id, channel, external_id
    )
    return contact_id
