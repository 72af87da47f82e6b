"""SQL of inbound messages: store one (with its conversation) once, read what became of it.

Storing is one statement either way, a database function that binds its org itself
(transaction-locally), so it runs on a `core.tenancy.self_bound_connection`:
`skillet_receive_inbound` for a webhook delivery (the org comes from the channel),
`skillet_store_inbound` for a message of a named org. Both refuse an id another contact's
message is stored under (`foreign_contact`): that rule has no other home.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from core.tenancy import org_proof
from inbox.message import InboundMessage, InboundText

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


@dataclass(frozen=True)
class PersistedInbound:
    """What storing a message found or did."""

    conversation_id: uuid.UUID  # for a foreign id: the other contact's conversation
    inbound_id: uuid.UUID
    created: bool  # False: the message was stored before (a redelivery)
    open: bool  # still waiting for a reply (or to be kept as context)
    # The reply's outbox status when the message was already answered ('pending': committed
    # but not yet handed to its channel, so its conversation is woken to deliver it).
    outbox_status: str | None
    foreign: bool  # the id is another contact's stored message: nothing was stored

    @property
    def wants_wakeup(self) -> bool:
        """Whether its conversation needs a job: a new or still open message, or a reply
        committed but never handed to its channel; not a foreign id."""
        if self.foreign:
            return False
        return self.created or self.open or self.outbox_status == "pending"


def _persisted(row: Any) -> PersistedInbound:
    return PersistedInbound(
        row["conversation_id"],
        row["inbound_id"],
        row["created"],
        row["open"],
        row["outbox_status"],
        row["foreign_contact"],
    )


STORE_INBOUND = """
select conversation_id, inbound_id, created, open, outbox_status, foreign_contact
from skillet_store_inbound($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
"""


async def upsert_inbound(
    conn: asyncpg.Connection, message: InboundMessage, *, received_at: datetime
) -> PersistedInbound:
    """Conversation + message (once) + what became of a copy stored before, in one trip
    (skillet_store_inbound). An unknown organization fails the conversation's foreign key
    (asyncpg.ForeignKeyViolationError)."""
    row = await conn.fetchrow(
        STORE_INBOUND,
        message.organization_id,
        org_proof(conn, message.organization_id),
        message.channel,
        message.contact_id,
        message.message_id,
        message.text,
        message.sent_at,
        received_at,
        message.kind,
        message.expects_reply,
        message.agent_id,
    )
    return _persisted(row)


@dataclass(frozen=True)
class ReceivedInbound:
    """A webhook delivery's message once stored: whose it is, and what storing it did."""

    organization_id: uuid.UUID
    channel_id: uuid.UUID
    contact_id: str
    persisted: PersistedInbound


RECEIVE_INBOUND = """
select organization_id, channel_id, contact_id, conversation_id, inbound_id, created, open,
       outbox_status, foreign_contact
from skillet_receive_inbound($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
"""


# The same for a message that quotes another (text.quoted): the quote recorded with it.
RECEIVE_QUOTING = """
select organization_id, channel_id, contact_id, conversation_id, inbound_id, created, open,
       outbox_status, foreign_contact
from skillet_receive_quoting($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
"""


async def receive_inbound(
    conn: asyncpg.Connection,
    text: InboundText,
    *,
    body: str,
    received_at: datetime,
    always_answered: bool,
    answerable: bool,
) -> ReceivedInbound | None:
    """Route, record the contact and store one webhook message in one trip
    (skillet_receive_inbound); None when no org connected the receiving number.

    `body`: the text as stored (inbox.message.storable_body); `always_answered`: answered
    whatever the channel says (typed text); `answerable`: answered where the channel
    answers non-text messages (webhook.non_text.reply_rule). `text.media`: what the
    worker fetches (written on a new message only); `text.contact_name`: the sender's
    profile name, written on the conversation when it changed; `text.quoted`: the message it
    quotes (skillet_receive_quoting, written on a new message only).
    """
    quoted = text.quoted
    quote = () if quoted is None else (quoted.external_id, quoted.text)
    row = await conn.fetchrow(
        RECEIVE_INBOUND if quoted is None else RECEIVE_QUOTING,
        text.kind.value,
        text.address,
        list(text.sender.aliases),
        text.sender.preferred,
        text.message_id,
        body,
        text.sent_at,
        received_at,
        text.message_kind,
        always_answered,
        answerable,
        None if text.media is None else text.media.as_json(),
        text.contact_name,
        *quote,
    )
    if row is None:
        return None
    return ReceivedInbound(
        row["organization_id"], row["channel_id"], row["contact_id"], _persisted(row)
    )
