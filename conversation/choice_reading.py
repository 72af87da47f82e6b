"""A customer's reply read as a choice: on WAHA the choices go as a numbered text, so a reply
of just the number (or the exact title) is that choice while the choices are the business's
last message; it reaches the model as a tap does, `[escolheu: «Sexta 14h» (id: s1)]`."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from conversation.choice_queries import fetch_last_choices
from conversation.context import Conversation
from conversation.queries import InboundRow
from core.tenancy import org_connection
from delivery.outbound_choices import MAX_READ_CHARS, chosen_marker, marker_choice, read_choice


async def read_choices(
    pool: Any, conversation: Conversation, batch: Sequence[InboundRow]
) -> Sequence[InboundRow]:
    """`batch` with each reply that names one of the offered choices written as the tap
    (the stored message keeps the customer's words); no statement unless a message is short
    enough to be one."""
    candidates = [
        row for row in batch if len(row.body) <= MAX_READ_CHARS and marker_choice(row.body) is None
    ]
    if not candidates:
        return batch
    async with org_connection(pool, conversation.organization_id) as conn:
        offered = await fetch_last_choices(conn, conversation.conversation_id)
    if offered is None:
        return batch
    read: list[InboundRow] = []
    for row in batch:
        choice = read_choice(row.body, offered) if row in candidates else None
        read.append(
            row
            if choice is None
            else dataclasses.replace(row, body=chosen_marker(choice.title, choice.id))
        )
    return read
