"""SQL of per-conversation ordering: stored messages, undelivered replies, the commit fence
(the holder reads its bursts and history through turn.holder_queries)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

import asyncpg


@dataclass(frozen=True)
class InboundRow:
    id: uuid.UUID
    external_id: str
    body: str
    received_at: datetime | None
    answered_by: uuid.UUID | None
    expects_reply: bool = True
    agent_id: uuid.UUID | None = None  # the agent of the number it came in on


@dataclass(frozen=True)
class AnsweringAgent:
    id: uuid.UUID | None
    system_prompt: str | None
    model_provider: str | None
    model_name: str | None


@dataclass(frozen=True)
class OpenBurst:
    """What waits in the conversation, oldest first, and who answers it."""

    rows: list[InboundRow]
    agent: AnsweringAgent


LIST_UNDELIVERED = """
select o.id, o.message_id, o.body,
       array(select m.external_id from messages m where m.answered_by = o.message_id
             order by m.received_at, m.id) as answered
from outbox o
where o.conversation_id = $1 and o.status = 'pending' and o.delivery_claimed_at is null
order by o.created_at, o.id
"""


@dataclass(frozen=True)
class UndeliveredReply:
    id: uuid.UUID  # the outbox row
    message_id: uuid.UUID  # the reply
    body: str
    answered: tuple[str, ...]  # external ids of the messages it answers


async def list_undelivered(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> list[UndeliveredReply]:
    """Replies committed but never handed to a channel (a crash between commit and send)."""
    rows = await conn.fetch(LIST_UNDELIVERED, conversation_id)
    return [
        UndeliveredReply(r["id"], r["message_id"], r["body"], tuple(r["answered"])) for r in rows
    ]


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


COMMIT_REPLY = """
select outcome, outbox_id, reply_id
from skillet_commit_reply($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
"""


@dataclass(frozen=True)
class TurnCounts:
    """A turn's durable counts, written by its reply's commit (skillet_commit_turn): a use per
    injected skill, a view per file read, and the day's activations by trigger."""

    used: tuple[str, ...] = ()
    viewed: tuple[str, ...] = ()
    # (skill, 'hard' | 'intent' | 'probe' | 'capped')
    activations: tuple[tuple[str, str], ...] = ()
    # What the turn's model calls cost: {agent_id, provider, model, calls, *_tokens} (a
    # count None: unreported), added to the day's token usage.
    usage: dict[str, Any] | None = None


class CommitOutcome(StrEnum):
    """What a reply commit returns (skillet_commit_turn, skillet_commit_reply: the same text)."""

    REPLIED = "replied"  # written: the reply, its outbox row, the marks and counts
    OVERTAKEN = "overtaken"  # an older message expecting a reply is still open: read again
    ANSWERED = "answered"  # someone answered part of the burst first: read again
    LEASE_LOST = "lease_lost"  # the lease is another holder's now: stop


@dataclass(frozen=True)
class CommittedReply:
    outcome: CommitOutcome
    outbox_id: uuid.UUID | None
    reply_id: uuid.UUID | None


@dataclass(frozen=True)
class ReplyCommit:
    """What a reply commit writes (skillet_commit_reply and skillet_commit_turn take the same
    thirteen arguments, `args()` in order)."""

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    channel: str
    batch_ids: Sequence[uuid.UUID]
    first_received_at: datetime
    body: str
    counts: TurnCounts
    at: datetime
    lease_token: uuid.UUID | None

    def args(self) -> tuple[Any, ...]:
        counts = self.counts
        return (
            self.organization_id,
            self.conversation_id,
            self.channel,
            list(self.batch_ids),
            self.first_received_at,
            self.body,
            list(counts.used),
            list(counts.viewed),
            [name for name, _ in counts.activations],
            [trigger for _, trigger in counts.activations],
            self.at,
            self.lease_token,
            counts.usage,
        )


async def commit_reply(conn: asyncpg.Connection, commit: ReplyCommit) -> CommittedReply:
    """The fenced reply commit with the turn's counts (skillet_commit_reply, the previous
    release's form of skillet_commit_turn): one statement, one transaction, refused to a
    holder whose lease ran out. The holder commits through turn.holder_queries.commit_turn
    (claim included)."""
    row = await conn.fetchrow(COMMIT_REPLY, *commit.args())
    assert row is not None  # the function always returns its one row
    return CommittedReply(CommitOutcome(row["outcome"]), row["outbox_id"], row["reply_id"])
