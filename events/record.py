"""Record an events-webhook event in the caller's transaction (skillet_record_event).

Call it on the connection and inside the transaction of the change that causes the event
(a handoff, a takeover, a release, a customer message while a person holds the
conversation): the event exists exactly when the change committed, and the worker's
delivery cron sends it afterwards, never inside a turn. A no-op (None) when the org has no
events URL. The connection must be bound to `organization_id` (core.tenancy.org_connection),
or pass the org's `proof` (core.tenancy.org_proof) on a connection bound to no org.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Any

import asyncpg

# How much of a message's text an event carries.
MESSAGE_PREVIEW_CHARS = 200


class EventType(StrEnum):
    HANDOFF_REQUESTED = "conversation.handoff_requested"
    TAKEN_OVER = "conversation.taken_over"
    RELEASED = "conversation.released"
    MESSAGE_RECEIVED = "message.received"  # only while the conversation is waiting or human


RECORD_EVENT = "select skillet_record_event($1, $2, $3, $4)"
RECORD_EVENT_WITH_PROOF = "select skillet_record_event($1, $2, $3, $4, $5)"


async def record_event(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    event_type: EventType,
    conversation_id: uuid.UUID,
    data: dict[str, Any] | None = None,
    *,
    proof: str | None = None,
) -> uuid.UUID | None:
    """The event's id, or None when the org has no events URL. `data` is the event's `data`
    object (a JSON object of at most 8 KiB)."""
    kind = EventType(event_type).value
    if proof is None:
        value = await conn.fetchval(RECORD_EVENT, organization_id, kind, conversation_id, data)
    else:
        value = await conn.fetchval(
            RECORD_EVENT_WITH_PROOF, organization_id, proof, kind, conversation_id, data
        )
    return None if value is None else uuid.UUID(str(value))


def message_data(message_id: uuid.UUID, text: str | None, **extra: Any) -> dict[str, Any]:
    """`data` of message.received: the message's id and its text's first 200 characters."""
    preview = (text or "")[:MESSAGE_PREVIEW_CHARS]
    return {"message_id": str(message_id), "text": preview, **extra}
