"""Verified, parsed texts -> route to the org that owns the receiving number -> enqueue."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

import structlog
from arq.connections import ArqRedis
from pydantic import ValidationError

from channels.contacts import ContactIds, choose_contact_id
from channels.models import Channel, ChannelKind
from channels.queries import (
    fetch_channel_by_address,
    insert_inbound_route,
    list_alias_contact_ids,
    upsert_contact_aliases,
)
from channels.waha_lids import LidResolver
from jobs.payloads import InboundMessagePayload
from jobs.queue import enqueue_inbound
from webhook.events import Delivery, InboundText
from webhook.non_text import expects_reply

log = structlog.get_logger(__name__)


@dataclass
class IngestReport:
    """The webhook's answer body: what became of each event of the delivery."""

    enqueued: int = 0
    duplicates: int = 0  # already queued, running or recently finished (same message id)
    unknown_channel: int = 0  # addressed to a number no org has connected
    invalid: int = 0  # a text the queue contract refuses (e.g. too long)
    skipped: int = 0  # statuses, our own messages, groups, system notices, ...

    def as_json(self) -> dict[str, int]:
        return asdict(self)


async def ingest(
    pool: Any,
    queue: ArqRedis,
    delivery: Delivery,
    *,
    coalesce_ms: int = 0,
    lids: LidResolver | None = None,
) -> IngestReport:
    """Enqueue every message whose receiving number is connected (non-text ones too: they
    are stored, and answered only where the channel says so); the org and agent come from
    `channels` only, never from the body. Database/Redis failures propagate (the caller
    answers 503)."""
    report = IngestReport(skipped=len(delivery.skipped))
    for skipped in delivery.skipped:
        log.info("webhook.skipped", reason=skipped.reason, detail=skipped.detail)
    if not delivery.texts:
        return report
    async with pool.acquire() as conn:
        channels: dict[tuple[ChannelKind, str], Channel | None] = {}
        for text in delivery.texts:
            key = (text.kind, text.address)
            if key not in channels:
                channels[key] = await fetch_channel_by_address(conn, text.kind, text.address)
            channel = channels[key]
            if channel is None:
                report.unknown_channel += 1
                log.warning("webhook.unknown_channel", kind=text.kind.value, address=text.address)
                continue
            with structlog.contextvars.bound_contextvars(
                organization_id=str(channel.organization_id), channel_id=str(channel.id)
            ):
                await _enqueue_text(conn, queue, channel, text, report, coalesce_ms, lids)
    return report


async def _enqueue_text(
    conn: Any,
    queue: ArqRedis,
    channel: Channel,
    text: InboundText,
    report: IngestReport,
    coalesce_ms: int,
    lids: LidResolver | None,
) -> None:
    lookup = _lid_lookup(lids, channel) if channel.kind is ChannelKind.WAHA else None
    contact_id = await resolve_contact_id(conn, channel.organization_id, text.sender, lookup)
    try:
        payload = InboundMessagePayload(
            organization_id=channel.organization_id,
            contact_id=contact_id,
            message_id=text.message_id,
            text=text.text,
            sent_at=text.sent_at,
            kind=text.message_kind,
            expects_reply=expects_reply(text.message_kind, channel.reply_to_non_text),
            agent_id=channel.agent_id,
        )
    except ValidationError as exc:
        report.invalid += 1
        fields = [".".join(map(str, e["loc"])) for e in exc.errors()]
        log.warning("webhook.invalid_message", fields=fields)
        return
    # Before the job exists: the worker looks the route up when it sends the reply.
    await insert_inbound_route(conn, channel.organization_id, text.message_id, channel.id)
    job = await enqueue_inbound(queue, payload, coalesce_ms=coalesce_ms)
    if job is None:
        report.duplicates += 1
        log.info("webhook.duplicate", job_id=payload.job_id)
    else:
        report.enqueued += 1
        log.info("webhook.enqueued", job_id=payload.job_id)


LidLookup = Callable[[str], Awaitable[str | None]]


def _lid_lookup(lids: LidResolver | None, channel: Channel) -> LidLookup | None:
    if lids is None:
        return None
    return functools.partial(lids.phone_of, channel.address)


async def resolve_contact_id(
    conn: Any, organization_id: uuid.UUID, sender: ContactIds, lookup: LidLookup | None = None
) -> str:
    """The sender's contact id in this org: an existing alias's, else their preferred id;
    every id of theirs in this event is then an alias of it (see channels.contacts).

    A linked id never seen before, with no phone in the event, is looked up first (`lookup`:
    WAHA's lid map), so a customer known by phone keeps their conversation."""
    known = await list_alias_contact_ids(conn, organization_id, sender.aliases)
    if not known and sender.phone is None and sender.lid is not None and lookup is not None:
        phone = await lookup(sender.lid)
        if phone is not None:
            sender = ContactIds(phone=phone, lid=sender.lid)
            known = await list_alias_contact_ids(conn, organization_id, sender.aliases)
    contact_id = choose_contact_id(sender, known)
    await upsert_contact_aliases(conn, organization_id, sender.aliases, contact_id)
    return contact_id
