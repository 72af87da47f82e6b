"""Delivering a committed reply: the Sender protocol, its default, and the outbox transitions."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog

from core.tenancy import org_connection
from delivery.contract import Recipient, Route, Sender
from delivery.errors import SendError, SendParked
from delivery.outbox_queries import (
    DeliveryClaim,
    OutboxRow,
    UndeliveredReply,
    claim_outbox_delivery,
    fetch_outbox_pending,
    list_undelivered,
    release_outbox_claim,
    update_outbox_failed,
    update_outbox_sent,
)

log = structlog.get_logger(__name__)

# A reply handed to its channel and not yet marked sent: (outbox id, the provider's message
# ids). The holder's next step marks it (conversation.queries.continue_conversation).
SentReply = tuple[uuid.UUID, tuple[str, ...]]


async def deliver_reply(pool: Any, sender: Sender, row: OutboxRow, recipient: Recipient) -> bool:
    """Claim a pending row, send it once, mark it sent; False if this call did not send it.

    At most once through a channel: a row with a route is claimed (committed) before the send
    and only a retryable SendError releases the claim, so a crash mid-send leaves it pending +
    claimed, never sent again. A row without a route reaches no one (LoggingSender, or a
    `no_channel` failure) and is not claimed: a re-run after a crash handles it again.
    A permanent SendError marks the row failed with its code and reason (not raised).
    No pooled connection is held while the channel is called: claim, let go, send, mark.
    (The holder's own replies are claimed by their commit and marked by its next step.)
    """
    async with org_connection(pool, row.organization_id) as conn:
        claim = await claim_outbox_delivery(conn, row.id)
    if claim is None:
        log.info("outbox.not_claimed", outbox_id=str(row.id))  # sent, failed or in flight
        return False
    provider_ids = await send_claimed(pool, sender, row, recipient, claim)
    if provider_ids is None:
        return False
    async with org_connection(pool, row.organization_id) as conn:
        return await update_outbox_sent(conn, row.id, provider_ids)


async def deliver_in_order(
    pool: Any, sender: Sender, rows: Sequence[OutboxRow], recipient: Recipient
) -> list[OutboxRow]:
    """deliver_reply for each row, in order; the rows this call sent. A row left pending
    (parked for its number's new token, or claimed by a send in flight) stops the rest:
    they wait behind it, for the channel's resume or the next holder, and never overtake it
    (a token replaced between two parts would otherwise send a file before its text). A
    row failed for good does not hold the rest back."""
    sent: list[OutboxRow] = []
    for row in rows:
        if await deliver_reply(pool, sender, row, recipient):
            sent.append(row)
        elif await still_pending(pool, row.organization_id, row.id):
            break
    return sent


async def deliver_waiting(
    pool: Any,
    sender: Sender,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    recipient: Recipient,
) -> list[UndeliveredReply]:
    """What waits in the conversation's outbox (pending, never claimed: a crash between
    commit and send, a parked number, a person's reply), oldest first, a reply's text before
    its files and its choices, through deliver_in_order; the ones this call sent."""
    async with org_connection(pool, organization_id) as conn:
        undelivered = await list_undelivered(conn, conversation_id)
    rows = [
        OutboxRow.pending(
            organization_id,
            conversation_id,
            reply.id,
            reply.message_id,
            reply.body,
            reply.template,
            reply.file,
            reply.choices,
        )
        for reply in undelivered
    ]
    sent = {row.id for row in await deliver_in_order(pool, sender, rows, recipient)}
    return [reply for reply in undelivered if reply.id in sent]


async def still_pending(pool: Any, organization_id: uuid.UUID, outbox_id: uuid.UUID) -> bool:
    """Whether a row not sent by this call is still to be delivered (see deliver_in_order)."""
    async with org_connection(pool, organization_id) as conn:
        return await fetch_outbox_pending(conn, outbox_id)


async def send_claimed(
    pool: Any, sender: Sender, row: OutboxRow, recipient: Recipient, claim: DeliveryClaim
) -> tuple[str, ...] | None:
    """Send a claimed row (see deliver_reply) with no connection held: the provider's
    message ids, for the caller to mark it sent with; None when the channel refused it for
    good (marked failed here) or parked it (SendParked: the claim is released, the row waits
    for the channel's resume). A retryable SendError releases the claim and is raised."""
    route = None
    if claim.route_kind is not None and claim.route_address is not None:
        route = Route(claim.route_kind, claim.route_address)
    target = replace(
        recipient,
        route=route,
        reply_to_external_id=claim.reply_to_external_id,
        last_inbound_at=claim.last_inbound_at,
    )
    try:
        provider_ids = await sender.send(row, target)
    except SendParked as exc:
        async with org_connection(pool, row.organization_id) as conn:
            await release_outbox_claim(conn, row.id)
        log.warning("outbox.parked", outbox_id=str(row.id), code=exc.code)
        return None
    except SendError as exc:
        async with org_connection(pool, row.organization_id) as conn:
            if exc.retryable:
                await release_outbox_claim(conn, row.id)
                raise
            await update_outbox_failed(conn, row.id, str(exc))
        log.error("outbox.failed", outbox_id=str(row.id), code=exc.code, error=exc.message[:300])
        return None
    return tuple(provider_ids or ())
