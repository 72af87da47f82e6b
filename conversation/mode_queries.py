"""SQL of a conversation's mode changes: every one through `skillet_change_mode`
(conversation.mode has its transitions); the caller owns the transaction."""

from __future__ import annotations

import uuid

import asyncpg

from conversation.mode import ConversationMode, Transition

CHANGE_MODE = """
select skillet_change_mode($1, $2, p_held_by => $3, p_cause => $4, p_reason => $5,
                           p_replied => $6, p_keep_pending => $7)
"""


async def change_mode(
    conn: asyncpg.Connection,
    conversation_id: uuid.UUID,
    transition: Transition,
    *,
    held_by: str | None = None,
    cause: str | None = None,
    reason: str | None = None,
    replied: bool = False,
    keep_pending: bool = True,
) -> ConversationMode | None:
    """The mode after the change, or None when `transition` does not apply (nothing changed)."""
    after: str | None = await conn.fetchval(
        CHANGE_MODE,
        conversation_id,
        transition.value,
        held_by,
        cause,
        reason,
        replied,
        keep_pending,
    )
    return None if after is None else ConversationMode(after)
