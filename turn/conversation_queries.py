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
    expects_reply: bool = True
    # The conversation the message is stored in: another contact's when its id came again
    # from someone else (never answered in this one).
    conversation_id: uuid.UUID | None = None


LIST_INBOUND_BY_EXTERNAL_IDS = """
select id, external_id, body, received_at, answered_by, expects_reply, conversation_id
from messages
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


LIST_UNANSWERED_BEFORE = """
select external_id, body, sent_at, coalesce(received_at, created_at) as received_at
from messages
where conversation_id = $1 and direction = 'inbound' and answered_by is null and expects_reply
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


# Answered messages, replies, and messages stored without expecting a reply (context), minus
# the burst being answered now (the prompt lists it after the history).
LIST_HISTORY = """
select direction, body from (
    select direction, body, created_at, id from messages
    where conversation_id = $1
      and (direction = 'outbound' or answered_by is not null or not expects_reply)
      and not (id = any($3::uuid[]))
    order by created_at desc, id desc limit $2
) recent order by created_at, id
"""


async def list_history(
    conn: asyncpg.Connection,
    conversation_id: uuid.UUID,
    limit: int,
    batch_ids: Sequence[uuid.UUID] = (),
) -> list[tuple[str, str]]:
    """Earlier exchange of the conversation, oldest first, for model context."""
    rows = await conn.fetch(LIST_HISTORY, conversation_id, limit, list(batch_ids))
    return [(r["direction"], r["body"]) for r in rows]


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
         received_at, kind, expects_reply)
    select $1, conv.id, 'inbound', $2, $4, $5, $6, $7, $8, $9 from conv
    on conflict (organization_id, channel, external_id) where direction = 'inbound' do nothing
    returning id
)
select conv.id as conversation_id,
       coalesce((select id from ins), m.id) as inbound_id,
       m.conversation_id as stored_conversation_id,
       o.id as outbox_id, o.message_id as reply_id, o.body as reply_body,
       o.status as outbox_status,
       agent.id as agent_id, agent.system_prompt, agent.model_provider, agent.model_name
from conv
left join messages m
    on m.organization_id = $1 and m.channel = $2 and m.external_id = $4
   and m.direction = 'inbound'
left join outbox o on o.message_id = m.answered_by
left join lateral (
    -- The receiving number's agent ($10) when it is one of this org's, else the org's first.
    select a.id, a.system_prompt, a.model_provider, a.model_name from agents a
    where a.organization_id = $1
    order by (a.id = $10::uuid) desc nulls last, a.created_at, a.id limit 1
) agent on true
"""


@dataclass(frozen=True)
class PersistedInbound:
    conversation_id: uuid.UUID
    inbound_id: uuid.UUID
    system_prompt: str | None
    outbox_id: uuid.UUID | None  # set when the message was already answered
    reply_id: uuid.UUID | None
    reply_body: str | None
    outbox_status: str | None
    # The answering agent: persona and model (provider null = the default model).
    agent_id: uuid.UUID | None = None
    model_provider: str | None = None
    model_name: str | None = None
    # Where the message was already stored (None: stored by this call). Another conversation
    # than conversation_id means its id came before from another contact.
    stored_conversation_id: uuid.UUID | None = None

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
    """Conversation + message (once) + the agent's prompt and model + any reply, in one trip.

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


COMMIT_REPLY = """
select outcome, outbox_id, reply_id
from skillet_commit_reply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
"""


@dataclass(frozen=True)
class TurnCounts:
    """A turn's durable counts, written by its reply's commit (migration 0016): a use per
    injected skill, a view per file read, and the day's activations by trigger."""

    used: tuple[str, ...] = ()
    viewed: tuple[str, ...] = ()
    activations: tuple[tuple[str, str], ...] = ()  # (skill, 'hard' | 'probe' | 'capped')


@dataclass(frozen=True)
class CommittedReply:
    outcome: str  # 'replied' | 'overtaken' | 'answered'
    outbox_id: uuid.UUID | None
    reply_id: uuid.UUID | None


async def commit_reply(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    channel: str,
    batch_ids: Sequence[uuid.UUID],
    first_received_at: datetime,
    body: str,
    counts: TurnCounts,
    at: datetime,
) -> CommittedReply:
    """The fenced reply commit with the turn's counts (skillet_commit_reply, migrations 0005,
    0008, 0016): one statement, one transaction."""
    row = await conn.fetchrow(
        COMMIT_REPLY,
        organization_id,
        conversation_id,
        channel,
        list(batch_ids),
        first_received_at,
        body,
        list(counts.used),
        list(counts.viewed),
        [name for name, _ in counts.activations],
        [trigger for _, trigger in counts.activations],
        at,
    )
    return CommittedReply(**dict(row))
