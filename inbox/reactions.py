"""A customer's reaction to a message: whether it is negative (pure), and storing it.

A reaction is kept on the message it reacts to, the latest per sender (skillet_receive_reaction),
never as a message and never starting a turn. A negative one (👎 😡 😠, or the deployment's
SKILLET_NEGATIVE_REACTIONS) to an agent reply counts against the skills that reply used: it is
information for the business, read by the API and the console, and nothing else reads it (not
the curator, not consolidation), so customers cannot wear a skill down.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from core.tenancy import self_bound_connection
from inbox.message import InboundReaction

DEFAULT_NEGATIVE_REACTIONS: Final = ("👎", "😡", "😠")

# What does not change an emoji's meaning: skin tones (U+1F3FB..U+1F3FF) and the text /
# emoji presentation selectors (U+FE0E, U+FE0F).
_MODIFIERS: Final = frozenset({*map(chr, range(0x1F3FB, 0x1F400)), "\ufe0e", "\ufe0f"})


def base_emoji(emoji: str) -> str:
    """The emoji without skin tones and variation selectors: 👎🏽 and 👎 are one reaction."""
    return "".join(c for c in emoji.strip() if c not in _MODIFIERS)


def negative_set(emojis: Iterable[str]) -> frozenset[str]:
    """The configured negative reactions as compared (base_emoji of each; blanks dropped)."""
    return frozenset(b for b in map(base_emoji, emojis) if b)


def is_negative(emoji: str, negative: frozenset[str]) -> bool:
    return bool(emoji) and base_emoji(emoji) in negative


@dataclass(frozen=True)
class ReceivedReaction:
    organization_id: uuid.UUID
    target_id: uuid.UUID | None  # None: a message we do not know, kept by its external id
    recorded: bool  # False: a redelivery, or older than the one kept


RECEIVE_REACTION = """
select organization_id, target_id, recorded
from skillet_receive_reaction($1, $2, $3, $4, $5, $6, $7, $8, $9)
"""


async def store_reaction(
    pool: Any, reaction: InboundReaction, *, negative: bool
) -> ReceivedReaction | None:
    """One statement in the org of the number it reached (None: no org connected it)."""
    async with self_bound_connection(pool) as conn:
        row = await conn.fetchrow(
            RECEIVE_REACTION,
            reaction.kind.value,
            reaction.address,
            list(reaction.sender.aliases),
            reaction.sender.preferred,
            reaction.message_id,
            reaction.target_id,
            reaction.emoji,
            negative,
            reaction.sent_at,
        )
    if row is None:
        return None
    return ReceivedReaction(row["organization_id"], row["target_id"], row["recorded"])
