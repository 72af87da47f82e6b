"""Verified, parsed texts -> stored in the org that owns the receiving number -> enqueued.

Per message, one pooled connection for one statement (skillet_receive_inbound: the org and
agent come from `channels`, never from the body), then one Redis call; the connection is
never held across it. Statuses and WAHA's linked-id lookups look the channel up first.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime
from typing import Any

import structlog
from arq.connections import ArqRedis

from channels.models import Channel
from channels.queries import fetch_channel_route, list_alias_contact_ids, update_receipts
from channels.waha_lids import LidResolver
from core.channel_kind import ChannelKind
from core.tenancy import org_connection
from inbox.contacts import ContactIds
from inbox.message import InboundReaction, InboundText, storable_body
from inbox.reactions import DEFAULT_NEGATIVE_REACTIONS, is_negative, negative_set, store_reaction
from inbox.store import store_echo, store_received
from jobs.payloads import inbound_job_id
from jobs.queue import enqueue_echo, enqueue_wakeup
from webhook.events import UNPARSEABLE, Delivery, StatusUpdate
from webhook.non_text import reply_rule

log = structlog.get_logger(__name__)


@dataclass
class IngestReport:
    """The webhook's answer body: what became of each event of the delivery."""

    enqueued: int = 0
    # Messages the business's number sent (stored, pending): the worker settles each after
    # the grace, as ours or the owner's.
    echoes: int = 0
    # Already queued, running or recently finished (same message id), or an id another
    # contact's message is stored under (refused).
    duplicates: int = 0
    unknown_channel: int = 0  # addressed to a number no org has connected
    invalid: int = 0  # a text the queue contract refuses (e.g. too long)
    statuses: int = 0  # receipts of our replies a status moved (sent, delivered, read, failed)
    # Customers' reactions kept on the message they react to (never a message, never a turn).
    reactions: int = 0
    skipped: int = 0  # statuses not recorded (deleted), our own messages, groups, notices, ...
    unparseable: int = 0  # of those skipped, events the parser failed on (a bug to look at)

    def as_json(self) -> dict[str, int]:
        """Flat (no asdict copy); `echoes` and `reactions` only when the delivery held any, so
        the answer to a delivery of customer messages keeps its shape."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in _SHOWN_WHEN_ANY or getattr(self, f.name)
        }


_SHOWN_WHEN_ANY = frozenset({"echoes", "reactions"})


ObserveSeconds = Callable[[float], None]


def _unobserved(seconds: float) -> None:
    return None


@dataclass(frozen=True)
class _Enqueue:
    coalesce_ms: int
    observe_s: ObserveSeconds
    transcribes: bool = False


_DEFAULT_NEGATIVE = negative_set(DEFAULT_NEGATIVE_REACTIONS)


async def ingest(
    pool: Any,
    queue: ArqRedis,
    delivery: Delivery,
    *,
    coalesce_ms: int = 0,
    lids: LidResolver | None = None,
    observe_enqueue_s: ObserveSeconds = _unobserved,
    transcribes_voice: bool = False,
    negative_reactions: frozenset[str] = _DEFAULT_NEGATIVE,
) -> IngestReport:
    """Store and enqueue every message whose receiving number is connected (non-text ones
    too: they are stored, and answered only where the channel says so); delivery statuses
    update the receipts of that org's replies only. Database/Redis failures propagate (the
    caller answers 503). Echoes (messages our numbers sent) are stored pending, one statement
    each, and settled by a job at once (it waits out the grace itself only while a reply of
    that conversation is in flight).
    `observe_enqueue_s` gets the time each enqueue took (the Redis call), in seconds;
    `transcribes_voice`: the workers transcribe voice notes (SKILLET_TRANSCRIBE_BASE_URL);
    `negative_reactions`: the negative set as compared (inbox.reactions.negative_set)."""
    report = IngestReport(skipped=len(delivery.skipped))
    for skipped in delivery.skipped:
        if skipped.reason == UNPARSEABLE:
            report.unparseable += 1
            log.warning("webhook.skipped", reason=skipped.reason, detail=skipped.detail)
        else:
            log.info("webhook.skipped", reason=skipped.reason, detail=skipped.detail)
    # A pooled connection is held per statement only, never across Redis or HTTP calls:
    # a burst of deliveries would otherwise queue for connections behind the enqueues.
    channels = _ChannelCache(pool)  # looked up only for statuses and linked ids
    await _record_statuses(pool, channels, delivery.statuses, report)
    for reaction in delivery.reactions:
        await _record_reaction(pool, reaction, report, negative_reactions)
    enqueue = _Enqueue(coalesce_ms, observe_enqueue_s, transcribes_voice)
    for text in delivery.texts:
        await _enqueue_text(pool, queue, channels, text, report, enqueue, lids)
    for echo in delivery.echoes:
        await _enqueue_echo(pool, queue, echo, report, enqueue)
    return report


async def _enqueue_echo(
    pool: Any, queue: ArqRedis, echo: InboundText, report: IngestReport, enqueue: _Enqueue
) -> None:
    """One statement (store it, pending), then one Redis call (its settling job): whose it
    is, the worker decides."""
    body = storable_body(echo.text)
    message_id = echo.message_id.strip()
    if body is None or not message_id:
        report.invalid += 1
        log.warning("webhook.invalid_echo", fields=["text" if body is None else "message_id"])
        return
    stored = await store_echo(
        pool, replace(echo, message_id=message_id), body=body, received_at=datetime.now(UTC)
    )
    if stored is None:
        report.unknown_channel += 1
        log.warning("webhook.unknown_channel", kind=echo.kind.value, address=echo.address)
        return
    if not stored.pending:
        report.duplicates += 1  # settled already
        return
    started = time.monotonic()
    job = await enqueue_echo(queue, stored.organization_id, stored.echo_id, message_id)
    enqueue.observe_s(time.monotonic() - started)
    if job is None and not stored.created:
        report.duplicates += 1
    else:
        report.echoes += 1
    log.info("webhook.echo_stored", organization_id=str(stored.organization_id))


async def _record_reaction(
    pool: Any, reaction: InboundReaction, report: IngestReport, negative: frozenset[str]
) -> None:
    """One statement: kept on the message it reacts to (or by its external id when we do not
    know that message); no job, whatever the channel answers."""
    stored = await store_reaction(
        pool,
        replace(reaction, message_id=reaction.message_id.strip()),
        negative=is_negative(reaction.emoji, negative),
    )
    if stored is None:
        report.unknown_channel += 1
        log.warning("webhook.unknown_channel", kind=reaction.kind.value, address=reaction.address)
        return
    if not stored.recorded:
        report.duplicates += 1
        return
    report.reactions += 1
    log.info(
        "webhook.reaction_stored",
        organization_id=str(stored.organization_id),
        known_message=stored.target_id is not None,
    )


class _ChannelCache:
    """The channels of one delivery's numbers, each looked up once."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self._found: dict[tuple[ChannelKind, str], Channel | None] = {}

    async def get(self, kind: ChannelKind, address: str) -> Channel | None:
        key = (kind, address)
        if key not in self._found:
            async with self._pool.acquire() as conn:
                self._found[key] = await fetch_channel_route(conn, kind, address)
        return self._found[key]


async def _record_statuses(
    pool: Any, channels: _ChannelCache, statuses: list[StatusUpdate], report: IngestReport
) -> None:
    """Each status against its number's org only (one statement per org)."""
    by_org: dict[uuid.UUID, list[StatusUpdate]] = {}
    for status in statuses:
        channel = await channels.get(status.kind, status.address)
        if channel is None:
            report.unknown_channel += 1
            continue
        by_org.setdefault(channel.organization_id, []).append(status)
    for organization_id, updates in by_org.items():
        rows = [(s.provider_message_id, s.status, s.error) for s in updates]
        async with org_connection(pool, organization_id) as conn:
            moved = await update_receipts(conn, organization_id, rows)
        report.statuses += len(moved)
        errors = {s.provider_message_id: s.error for s in updates if s.status == "failed"}
        for provider_id, state in moved.items():
            if state == "failed":
                log.warning(
                    "webhook.reply_undelivered",
                    organization_id=str(organization_id),
                    provider_message_id=provider_id,
                    error=errors.get(provider_id),
                )


async def _enqueue_text(
    pool: Any,
    queue: ArqRedis,
    channels: _ChannelCache,
    text: InboundText,
    report: IngestReport,
    enqueue: _Enqueue,
    lids: LidResolver | None,
) -> None:
    body = storable_body(text.text)
    message_id = text.message_id.strip()
    if body is None or not message_id:
        report.invalid += 1
        log.warning("webhook.invalid_message", fields=["text" if body is None else "message_id"])
        return
    if text.kind is ChannelKind.WAHA and lids is not None:
        text = await with_looked_up_phone(pool, channels, text, lids)
    always, answerable = reply_rule(text.message_kind)
    # A voice note the worker will transcribe is answered like typed text, whatever the
    # channel says of non-text messages (its transcript is what the customer said).
    always = always or (enqueue.transcribes and text.message_kind == "audio" and bool(text.media))
    # One connection, one statement: the number's org and agent, the contact, the reply
    # route, the message; before the job exists (the worker reads the route to reply).
    received = await store_received(
        pool,
        replace(text, message_id=message_id),
        body=body,
        received_at=datetime.now(UTC),
        always_answered=always,
        answerable=answerable,
    )
    if received is None:
        report.unknown_channel += 1
        log.warning("webhook.unknown_channel", kind=text.kind.value, address=text.address)
        return
    organization_id = received.organization_id
    job_id = inbound_job_id(organization_id, message_id)
    with structlog.contextvars.bound_contextvars(
        organization_id=str(organization_id), channel_id=str(received.channel_id)
    ):
        if received.persisted.foreign:
            # The id is another contact's stored message: answering or re-sending anything
            # for it here would cross conversations (refused by skillet_store_inbound).
            report.duplicates += 1
            log.warning("webhook.duplicate_foreign_contact", job_id=job_id, message_id=message_id)
            return
        started = time.monotonic()
        job = await enqueue_wakeup(
            queue,
            organization_id,
            received.persisted,
            message_id,
            coalesce_ms=enqueue.coalesce_ms,
        )
        enqueue.observe_s(time.monotonic() - started)
        if job is None:
            report.duplicates += 1
            log.info("webhook.duplicate", job_id=job_id)
        else:
            report.enqueued += 1
            log.info("webhook.enqueued", job_id=job_id)


async def with_looked_up_phone(
    pool: Any, channels: _ChannelCache, text: InboundText, lids: LidResolver
) -> InboundText:
    """A linked id never seen before, with no phone in the event, gets the phone WAHA knows
    for it (so a customer known by phone keeps their conversation); else `text` as is.
    The rare path: two more statements and an HTTP call, before the message is stored."""
    sender = text.sender
    if sender.phone is not None or sender.lid is None:
        return text
    channel = await channels.get(text.kind, text.address)
    if channel is None:
        return text  # not connected: stored nowhere
    async with org_connection(pool, channel.organization_id) as conn:
        known = await list_alias_contact_ids(conn, channel.organization_id, [sender.lid])
    if known:
        return text  # seen before: its contact id is on record
    phone = await lids.phone_of(channel.address, sender.lid)
    if phone is None:
        return text
    return replace(text, sender=ContactIds(phone=phone, lid=sender.lid))
