"""Delivering a committed reply: the Sender protocol, its default, and the sent transition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import asyncpg
import structlog

from turn.queries import OutboxRow, update_outbox_sent

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Recipient:
    channel: str
    contact_id: str


class Sender(Protocol):
    async def send(self, row: OutboxRow, recipient: Recipient) -> None:
        """Deliver `row.body`; raise turn.errors.SendError when the channel fails."""
        ...


class LoggingSender:
    """Default sender until real WhatsApp senders exist: logs the delivery (never the body)."""

    async def send(self, row: OutboxRow, recipient: Recipient) -> None:
        log.info(
            "outbox.delivered",
            outbox_id=str(row.id),
            channel=recipient.channel,
            chars=len(row.body),
        )


async def deliver_reply(
    conn: asyncpg.Connection, sender: Sender, row: OutboxRow, recipient: Recipient
) -> bool:
    """Send a pending row then mark it sent; False if another run had already marked it."""
    await sender.send(row, recipient)
    return await update_outbox_sent(conn, row.id)
