"""Waking the replies that waited for a channel: its new access token was proven and stored.

A reply whose channel is `needs_token` stays pending and unclaimed (conversation.outbox parks it); a
conversation's holder delivers what is pending before it answers anything new
(conversation.holder), so waking each waiting conversation of the org sends them, oldest first,
with the new token, or fails those whose customer-service window has closed meanwhile.
"""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
import structlog

from channels.credential_queries import list_waiting_conversations
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload
from jobs.queue import enqueue_once

log = structlog.get_logger(__name__)


async def wake_waiting_replies(
    conn: asyncpg.Connection, redis: Any, organization_id: uuid.UUID
) -> int:
    """Enqueue a job per conversation of the org with a reply waiting; how many. A failed
    enqueue raises (the conversation sweep wakes unanswered messages, not waiting replies):
    the caller says so, and a later token change, or the customer's next message, wakes them."""
    woken = 0
    for conversation_id in await list_waiting_conversations(conn, organization_id):
        payload = ConversationPayload(
            organization_id=organization_id, conversation_id=conversation_id
        )
        job = await enqueue_once(
            redis,
            HANDLE_INBOUND_MESSAGE,
            payload.model_dump(mode="json"),
            job_id=f"resume:{conversation_id}:{uuid.uuid4().hex}",
        )
        woken += job is not None
    if woken:
        log.info("channel.resumed", organization_id=str(organization_id), woken=woken)
    return woken
