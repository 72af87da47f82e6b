"""arq job `events_delivery`: send the events outbox's due events to each org's URL.

Thin: the worker's startup put the delivery's config in the context; this opens the guarded
HTTP session for one pass (events.transport), runs it (events.delivery) and reports each
settled event to the metrics. Never raises (the next tick retries); one tick at a time per
schedule across workers (arq's unique cron job id per tick), and several passes at once
never send one event twice at the same time (the claim skips locked rows).
"""

from __future__ import annotations

from typing import Any

import structlog

from core.address_guard import AddressGuard
from events.backoff import Settlement
from events.delivery import deliver_pass
from events.queries import ClaimedEvent
from events.transport import guarded_poster
from jobs.context import JobContext

log = structlog.get_logger(__name__)

EVENTS_DELIVERY = "events_delivery"


async def events_delivery(ctx: JobContext) -> dict[str, Any]:
    """One delivery pass; returns a JSON summary."""
    config = ctx["events"]
    metrics = ctx.get("metrics")

    def settled(event: ClaimedEvent, settlement: Settlement) -> None:
        if metrics is not None:
            code = None if settlement.error is None else settlement.error.split(":", 1)[0]
            metrics.event_settled(settlement.outcome.value, code)

    guard = AddressGuard(allow_private=config.allow_private)
    try:
        async with guarded_poster(guard, config.timeout_s) as poster:
            report = await deliver_pass(
                ctx["pool"], poster, config, clock=ctx["clock"], on_settled=settled
            )
    except Exception as exc:  # the worker must outlive a failing pass: the next one retries
        log.error("events.delivery_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    return report.to_json()
