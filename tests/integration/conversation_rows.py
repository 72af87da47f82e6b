"""Conversations and their customer messages written straight into the test database (as
its owner), for tests of what the API and the console list and find."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import asyncpg


async def insert_conversation(
    db: asyncpg.Connection,
    org: uuid.UUID,
    contact: str,
    name: str | None,
    texts: list[str],
    *,
    at: datetime,
    mode: str = "agent",
    held_by: str | None = None,
    answered: bool = True,
) -> uuid.UUID:
    """A conversation with the customer's `texts` (answered unless `answered` is False)."""
    conversation_id: uuid.UUID = await db.fetchval(
        """insert into conversations (organization_id, channel, contact_id, contact_name,
                                      created_at, mode, held_by, mode_since)
           values ($1, 'whatsapp', $2, $3, $4, $5, $6, $4) returning id""",
        org,
        contact,
        name,
        at,
        mode,
        held_by,
    )
    for n, text in enumerate(texts):
        inbound = await db.fetchval(
            """insert into messages (organization_id, conversation_id, direction, channel,
                                     external_id, body, received_at, created_at)
               values ($1, $2, 'inbound', 'whatsapp', $3, $4, $5, $5) returning id""",
            org,
            conversation_id,
            f"wamid.{uuid.uuid4().hex}",
            text,
            at + timedelta(seconds=n),
        )
        if answered:
            reply = await db.fetchval(
                """insert into messages (organization_id, conversation_id, direction, channel,
                                         body, reply_to_id, created_at)
                   values ($1, $2, 'outbound', 'whatsapp', 'Claro!', $3, $4) returning id""",
                org,
                conversation_id,
                inbound,
                at + timedelta(seconds=n, milliseconds=500),
            )
            await db.execute("update messages set answered_by = $1 where id = $2", reply, inbound)
    return conversation_id
