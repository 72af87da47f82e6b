"""What a customer sees while the agent works: their message read, the typing indicator.

Owned here, below the conversation that asks for it; channels/ implements it for the Cloud
API and WAHA. Every call is fire-and-forget: it returns at once, never raises, never delays,
fails or retries a turn (a failure is a metric and a log line, where it happens).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Reading:
    """The burst a turn answers: its conversation and the last customer message of it."""

    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    contact_id: str
    external_id: str  # the provider's id of the burst's last message
    # The number it came to with its credentials, as the burst's read returned it
    # (channels.presence_queries.ReadNumber, read there); None: no connected number.
    number: object | None = None


class Typing(Protocol):
    def stop(self) -> None:
        """The reply was sent or the turn ends without one: the indicator goes (WAHA's
        stopTyping; the Cloud API's goes by itself with the reply, or after 25 s)."""
        ...


class Presence(Protocol):
    @property
    def marks_read(self) -> bool:
        """reading() marks the burst read: the reply's commit then moves the conversation's
        read mark (nothing to move when it does not)."""
        ...

    def reading(self, burst: Reading) -> Typing:
        """Mark `burst.external_id` read (and the messages before it) and show the typing
        indicator, in the background; the handle stops the indicator."""
        ...

    def mark_read(self, organization_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
        """A person opened the conversation: its customer messages not yet marked read are,
        once each, in the background (no typing indicator)."""
        ...


class _NoTyping:
    def stop(self) -> None:
        return None


NO_TYPING: Typing = _NoTyping()


class NoPresence:
    """Shows nothing (tests, the CLI, SKILLET_READ_RECEIPTS and SKILLET_TYPING_INDICATOR off)."""

    marks_read = False

    def reading(self, burst: Reading) -> Typing:
        return NO_TYPING

    def mark_read(self, organization_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
        return None


NO_PRESENCE: Presence = NoPresence()
