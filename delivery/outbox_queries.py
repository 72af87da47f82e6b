"""SQL of the outbox: a reply's row from commit to sent or failed, and its delivery claim.

A committed reply is handed to its channel at most once: its row is claimed before the send
(skillet_claim_outbox, which the holder's reply commit also runs) and marked sent or failed
after it; a claim older than any send can last is failed by the outbox sweep, never re-sent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from delivery.outbound_choices import OutboundChoices
from delivery.outbound_file import OutboundFile


@dataclass(frozen=True)
class OutboxTemplate:
    """A row that leaves as a WhatsApp template message (outbox.template): the only kind
    WhatsApp takes outside the 24-hour customer-service window."""

    name: str
    language: str
    params: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()  # the body's, in order: named ones are sent by name

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "language": self.language,
            "params": list(self.params),
            "placeholders": list(self.placeholders),
        }

    @classmethod
    def from_json(cls, value: Any) -> OutboxTemplate | None:
        """The stored jsonb (text, as asyncpg returns it, or decoded); None for none."""
        if value is None:
            return None
        data = json.loads(value) if isinstance(value, str) else value
        return cls(
            str(data["name"]),
            str(data["language"]),
            tuple(str(p) for p in data.get("params", ())),
            tuple(str(p) for p in data.get("placeholders", ())),
        )


@dataclass(frozen=True)
class OutboxRow:
    id: uuid.UUID
    message_id: uuid.UUID  # the outbound (reply) message
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    body: str  # for a template: its body as the customer reads it
    status: str
    template: OutboxTemplate | None = None
    # A file part of the reply (part 1, 2, ...: send_skill_file): sent as that file, `body`
    # being its caption; None for the text part.
    file: OutboundFile | None = None
    # The choices part of a reply (send_choices, the satisfaction question): sent as buttons,
    # a list or (WAHA) a numbered text, after the text and the files; `body` its text.
    choices: OutboundChoices | None = None

    @classmethod
    def pending(
        cls,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        outbox_id: uuid.UUID,
        reply_id: uuid.UUID,
        body: str,
        template: OutboxTemplate | None = None,
        file: OutboundFile | None = None,
        choices: OutboundChoices | None = None,
    ) -> OutboxRow:
        """A committed reply (or one of its parts) not yet handed to its channel."""
        return cls(
            outbox_id,
            reply_id,
            organization_id,
            conversation_id,
            body,
            "pending",
            template,
            file,
            choices,
        )


def outbound_file(value: Any) -> OutboundFile | None:
    """outbox.file as stored (jsonb text, as asyncpg returns it, or decoded)."""
    if value is None:
        return None
    return OutboundFile.from_json(json.loads(value) if isinstance(value, str) else value)


# Sent, and one receipt per message id the provider answered with (its statuses update them).
UPDATE_OUTBOX_SENT = """
with sent as (
    update outbox set status = 'sent', sent_at = now(), attempts = attempts + 1
    where id = $1 and status = 'pending'
    returning id, organization_id
), receipts as (
    insert into outbox_receipts (organization_id, provider_message_id, outbox_id)
    select sent.organization_id, provider_id, sent.id
    from sent, unnest($2::text[]) as provider_id
    on conflict (organization_id, provider_message_id) do nothing
)
select count(*) from sent
"""


async def update_outbox_sent(
    conn: asyncpg.Connection, outbox_id: uuid.UUID, provider_message_ids: Sequence[str] = ()
) -> bool:
    """Mark a pending row sent; False if it was not pending (someone else sent it)."""
    updated: int = await conn.fetchval(UPDATE_OUTBOX_SENT, outbox_id, list(provider_message_ids))
    return updated == 1


@dataclass(frozen=True)
class DeliveryClaim:
    """What a sender needs about a claimed outbox row (None: not known)."""

    reply_to_external_id: str | None  # the provider's id of the message being answered
    last_inbound_at: datetime | None  # the customer's latest message in the conversation
    route_kind: str | None  # channels.kind of the number the reply leaves from
    route_address: str | None  # its phone_number_id / WAHA session


# The claim and its route live in skillet_claim_outbox, which the holder's
# reply commit also runs (conversation.queries.commit_turn).
CLAIM_OUTBOX_DELIVERY = """
select reply_to_external_id, last_inbound_at, route_kind, route_address
from skillet_claim_outbox($1)
"""


async def claim_outbox_delivery(
    conn: asyncpg.Connection, outbox_id: uuid.UUID
) -> DeliveryClaim | None:
    """Claim a pending, never-claimed row for one send when it has a route (the only kind
    that leaves the building, so the only kind a crash mid-send could deliver twice; a row
    without one is re-tried by a re-run); None if it is sent, failed or claimed."""
    row = await conn.fetchrow(CLAIM_OUTBOX_DELIVERY, outbox_id)
    return None if row is None else DeliveryClaim(**dict(row))


RELEASE_OUTBOX_CLAIM = """
update outbox set delivery_claimed_at = null where id = $1 and status = 'pending'
"""


async def release_outbox_claim(conn: asyncpg.Connection, outbox_id: uuid.UUID) -> None:
    """The sender said nothing went out and a later try may work: allow one."""
    await conn.execute(RELEASE_OUTBOX_CLAIM, outbox_id)


# Whether a row is still to be delivered (parked for its channel's new token, or claimed by
# a send in flight): the parts and replies after it wait behind it (conversation.outbox).
FETCH_OUTBOX_PENDING = "select status = 'pending' from outbox where id = $1"


async def fetch_outbox_pending(conn: asyncpg.Connection, outbox_id: uuid.UUID) -> bool:
    """True when the row is still pending (not sent, not failed)."""
    return bool(await conn.fetchval(FETCH_OUTBOX_PENDING, outbox_id))


UPDATE_OUTBOX_FAILED = """
update outbox set status = 'failed', last_error = $2, attempts = attempts + 1
where id = $1 and status = 'pending'
"""


async def update_outbox_failed(conn: asyncpg.Connection, outbox_id: uuid.UUID, reason: str) -> bool:
    """Mark a pending row failed for good, keeping why; False if it was not pending."""
    status: str = await conn.execute(UPDATE_OUTBOX_FAILED, outbox_id, reason[:2000])
    return status.endswith(" 1")


# A claim older than any send can last (its job was cancelled, or its worker died): the
# reply may or may not have reached the customer, so it is failed, not re-sent (one narrow
# function across orgs).
FAIL_ABANDONED_CLAIMS = "select id, organization_id from skillet_fail_abandoned_claims($1)"


async def fail_abandoned_claims(
    conn: asyncpg.Connection, older_than_s: float
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Mark failed every pending row claimed more than `older_than_s` ago; (id, org) of each."""
    rows = await conn.fetch(FAIL_ABANDONED_CLAIMS, older_than_s)
    return [(r["id"], r["organization_id"]) for r in rows]


# A reply's parts (its text, its files, its choices) share created_at: `part` keeps their order.
LIST_UNDELIVERED = """
select o.id, o.message_id, o.body, o.template, o.file, o.choices,
       array(select m.external_id from messages m where m.answered_by = o.message_id
             order by m.received_at, m.id) as answered
from outbox o
where o.conversation_id = $1 and o.status = 'pending' and o.delivery_claimed_at is null
order by o.created_at, o.part, o.id
"""


@dataclass(frozen=True)
class UndeliveredReply:
    id: uuid.UUID  # the outbox row
    message_id: uuid.UUID  # the reply
    body: str
    answered: tuple[str, ...]  # external ids of the messages it answers
    template: OutboxTemplate | None = None
    file: OutboundFile | None = None  # a file part (send_skill_file)
    choices: OutboundChoices | None = None  # a choices part (send_choices, satisfaction)


async def list_undelivered(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> list[UndeliveredReply]:
    """Replies committed but never handed to a channel (a crash between commit and send)."""
    rows = await conn.fetch(LIST_UNDELIVERED, conversation_id)
    return [
        UndeliveredReply(
            r["id"],
            r["message_id"],
            r["body"],
            tuple(r["answered"]),
            OutboxTemplate.from_json(r["template"]),
            outbound_file(r["file"]),
            OutboundChoices.from_json(r["choices"]),
        )
        for r in rows
    ]
