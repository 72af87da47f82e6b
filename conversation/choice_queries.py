"""SQL of the choices a conversation offered: those of the business's last message, which a
customer's reply of just a number or a title is read against (conversation.choice_reading)."""

from __future__ import annotations

import uuid

import asyncpg

from delivery.outbound_choices import OutboundChoices

# The choices part of the conversation's latest outbound message (any author), if it has one:
# once the business said anything after them, a "2" is just a "2".
FETCH_LAST_CHOICES = """
select o.choices
from outbox o
where o.message_id = (
    select m.id from messages m
    where m.conversation_id = $1 and m.direction = 'outbound'
    order by m.created_at desc, m.id desc
    limit 1
) and o.choices is not null
order by o.part desc
limit 1
"""


async def fetch_last_choices(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> OutboundChoices | None:
    return OutboundChoices.from_json(await conn.fetchval(FETCH_LAST_CHOICES, conversation_id))
