"""What a verified webhook delivery holds once parsed: messages to enqueue, statuses, skips."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from channels.contacts import ContactIds
from channels.models import ChannelKind
from jobs.payloads import MessageKind


@dataclass(frozen=True)
class InboundText:
    """One customer message, addressed to one of our numbers: typed text, or the description
    of what they sent (see webhook.non_text)."""

    kind: ChannelKind
    address: str  # the receiving number: Cloud API phone_number_id / WAHA session
    message_id: str  # the provider's message id (wamid / WAHA id): the dedup key
    sender: ContactIds
    text: str
    sent_at: datetime
    message_kind: MessageKind = "text"


@dataclass(frozen=True)
class Skipped:
    """An event that never reaches a conversation, and why (`status`, `from_me`, ...)."""

    reason: str
    detail: str = ""


# The statuses a receipt records; their order (a status never moves back, `failed` is final)
# is the database's skillet_receipt_rank (migrations/0011_delivery_receipts.sql).
RECEIPT_STATUSES = frozenset({"sent", "delivered", "read", "failed"})


@dataclass(frozen=True)
class StatusUpdate:
    """What the provider says became of one message we sent (a reply's part)."""

    kind: ChannelKind
    address: str  # the number it was sent from
    provider_message_id: str
    status: str  # one of RECEIPT_STATUSES
    error: str | None = None  # the provider's reason, for `failed`


@dataclass
class Delivery:
    texts: list[InboundText] = field(default_factory=list)
    statuses: list[StatusUpdate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def skip(self, reason: str, detail: object = "") -> None:
        self.skipped.append(Skipped(reason, str(detail)[:100]))


def epoch_to_utc(value: object, fallback: datetime) -> datetime:
    """A provider's Unix timestamp (seconds, int or numeric string) -> aware UTC datetime."""
    try:
        seconds = int(str(value))
        return datetime.fromtimestamp(seconds, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return fallback
