"""The worker's Sender: picks the reply's channel sender and keeps WhatsApp's 24-hour rule."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import structlog

from channels.errors import SendFailure, send_failed
from turn.outbox import Recipient, Sender
from turn.outbox_queries import OutboxRow

log = structlog.get_logger(__name__)

CUSTOMER_SERVICE_WINDOW = timedelta(hours=24)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def outside_window(last_inbound_at: datetime | None, now: datetime, window: timedelta) -> bool:
    """True when a free-form reply may no longer be sent (unknown last message: attempt it)."""
    return last_inbound_at is not None and now - last_inbound_at >= window


class ChannelSender:
    """Routes each reply to the sender of its channel kind (`Recipient.route.kind`).

    A reply without a route (its message did not come through the webhook and the org has no
    single channel to fall back on) goes to `unrouted`, or fails with `no_channel` when that
    is None. A routed reply whose customer last wrote `window` ago or more is not attempted:
    outside the customer-service window WhatsApp only takes template messages.
    """

    def __init__(
        self,
        senders: Mapping[str, Sender],
        *,
        unrouted: Sender | None,
        window: timedelta = CUSTOMER_SERVICE_WINDOW,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self._senders = dict(senders)
        self._unrouted = unrouted
        self._window = window
        self._clock = clock

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        route = recipient.route
        if route is None:
            if self._unrouted is None:
                raise send_failed(SendFailure.NO_CHANNEL, "the organization has no channel")
            log.info("outbox.unrouted", outbox_id=str(row.id))
            return await self._unrouted.send(row, recipient)
        sender = self._senders.get(route.kind)
        if sender is None:
            raise send_failed(
                SendFailure.NOT_CONFIGURED, f"no sender for channel kind {route.kind}"
            )
        last = recipient.last_inbound_at
        # A template is what WhatsApp takes outside the window: the only row sent past it.
        if (
            row.template is None
            and last is not None
            and outside_window(last, self._clock(), self._window)
        ):
            hours = self._window.total_seconds() / 3600
            raise send_failed(
                SendFailure.OUTSIDE_WINDOW,
                f"the customer last wrote at {last.isoformat()}, {hours:g} h or more ago: "
                "outside the customer-service window only template messages are allowed",
            )
        return await sender.send(row, recipient)
