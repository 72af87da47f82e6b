"""The send contract: where a reply part goes (Route, Recipient) and what sends it (Sender).

Owned below every feature that sends: the conversation hands rows to a Sender, channels/
implements it for Cloud API and WAHA, the worker wraps it with metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import structlog

from delivery.outbox_queries import OutboxRow

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Route:
    """The connected number a reply leaves from (a `channels` row)."""

    kind: str  # 'cloud_api' | 'waha'
    address: str  # Cloud API phone_number_id / WAHA session name


@dataclass(frozen=True)
class Recipient:
    channel: str
    contact_id: str
    # Filled by deliver_reply from the database; None when not known (e.g. a message that
    # was enqueued by `skillet enqueue` for an org without exactly one channel).
    route: Route | None = None
    reply_to_external_id: str | None = None  # the provider's id of the message answered
    last_inbound_at: datetime | None = None  # the customer's latest message (24-hour rule)


class Sender(Protocol):
    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        """Deliver `row.body` (or `row.file`, a file part, `row.body` its caption); the
        provider's id of each message it went out as (their delivery statuses arrive later),
        when it gives them. Raise turn.errors.SendError when
        the channel fails (retryable: nothing went out, a later try may work; else the row is
        marked failed)."""
        ...


class LoggingSender:
    """Sender for replies with no channel in development: logs the delivery (never the body)."""

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        log.info(
            "outbox.delivered",
            outbox_id=str(row.id),
            channel=recipient.channel,
            chars=len(row.body),
            file_kind=None if row.file is None else row.file.kind.value,
            file_bytes=None if row.file is None else row.file.size,
        )
        return None
