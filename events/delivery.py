"""One delivery pass of the events outbox: claim due events, POST each, settle them.

At least once: an event is claimed (skillet_claim_events, `for update skip locked`, so two
workers never send one event at the same time) for a lease longer than the pass can last,
sent, then settled (skillet_settle_events): delivered on a 2xx, else due again after a
backoff or failed and kept (events.backoff). A worker that dies between the send and the
settle leaves the event to be claimed again when the lease ends: the receiver may see it
twice and dedupes by `X-Skillet-Event-Id`. No connection is held during the HTTP calls: one
is taken to claim and another to settle. Never runs inside a turn (the worker's cron).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from core.clock import Clock
from events.backoff import Outcome, RetryPolicy, Settlement, settle
from events.queries import ClaimedEvent, claim_events, settle_events
from events.signature import EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, sign
from events.transport import EventPoster, PostResult

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class DeliveryConfig:
    policy: RetryPolicy
    batch_size: int  # events claimed, and sent concurrently, at once
    timeout_s: float  # per request
    allow_private: bool  # SKILLET_EVENTS_ALLOW_PRIVATE_URLS
    lease_s: float  # a claim outlives any pass (the pass's job timeout, plus a margin)
    budget_s: float  # no new batch is claimed once a pass has run this long


@dataclass
class DeliveryReport:
    delivered: int = 0
    retried: int = 0
    failed: int = 0
    batches: int = 0
    unsettled: int = 0  # claimed again by another claim before this one settled them

    def to_json(self) -> dict[str, Any]:
        return {"status": "ok", **vars(self)}


OnSettled = Callable[[ClaimedEvent, Settlement], None]


def event_body(event: ClaimedEvent) -> bytes:
    """The bytes sent and signed: the recorded payload, keys sorted, compact, UTF-8."""
    return json.dumps(
        event.payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")
    ).encode("utf-8")


async def send_event(poster: EventPoster, event: ClaimedEvent) -> PostResult:
    if event.url is None or event.secret is None:
        return PostResult(error="events_url_cleared", detail="no events URL now", refused=True)
    body = event_body(event)
    headers = {
        SIGNATURE_HEADER: sign(event.secret, body),
        EVENT_HEADER: event.type,
        EVENT_ID_HEADER: str(event.id),
    }
    return await poster.post(event.url, body, headers)


def decide(
    event: ClaimedEvent, result: PostResult, clock: Clock, policy: RetryPolicy
) -> Settlement:
    age_s = (clock() - event.created_at).total_seconds()
    error = None if result.error is None else f"{result.error}: {result.detail}"[:500]
    return settle(
        delivered=result.delivered,
        permanent=result.refused,
        error=error,
        attempts=event.attempts,
        age_s=age_s,
        policy=policy,
    )


async def deliver_pass(
    pool: Any,
    poster: EventPoster,
    config: DeliveryConfig,
    *,
    clock: Clock,
    on_settled: OnSettled | None = None,
    monotonic: Callable[[], float] = time.monotonic,
) -> DeliveryReport:
    """Claim and send batches until none is full or the budget is spent."""
    report = DeliveryReport()
    started = monotonic()
    while True:
        async with pool.acquire() as conn:
            claimed = await claim_events(conn, config.batch_size, config.lease_s)
        if not claimed:
            return report
        report.batches += 1
        results = await asyncio.gather(*(send_event(poster, e) for e in claimed))
        pairs = zip(claimed, results, strict=True)
        settled = [(e, decide(e, r, clock, config.policy)) for e, r in pairs]
        async with pool.acquire() as conn:
            count = await settle_events(conn, claimed[0].claim_id, [(e.id, s) for e, s in settled])
        report.unsettled += len(settled) - count
        for event, settlement in settled:
            _count(report, event, settlement)
            if on_settled is not None:
                on_settled(event, settlement)
        spent_s = monotonic() - started
        if len(claimed) < config.batch_size or spent_s + config.timeout_s > config.budget_s:
            return report


def _count(report: DeliveryReport, event: ClaimedEvent, settlement: Settlement) -> None:
    fields = {
        "event_id": str(event.id),
        "organization_id": str(event.organization_id),
        "type": event.type,
        "attempts": event.attempts,
    }
    if settlement.outcome is Outcome.DELIVERED:
        report.delivered += 1
        log.info("events.delivered", **fields)
    elif settlement.outcome is Outcome.RETRY:
        report.retried += 1
        log.warning(
            "events.retry", retry_in_s=settlement.retry_in_s, error=settlement.error, **fields
        )
    else:
        report.failed += 1
        log.error("events.failed", error=settlement.error, **fields)
