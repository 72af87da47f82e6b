"""arq job `outbox_sweep`: replies whose send was interrupted after its claim become `failed`.

A reply is claimed before it is sent (at most once through a channel), so a worker killed
mid-send, or a job cancelled by its timeout, leaves a `pending` row that nobody will send
again. Once the claim is older than any send can last, the row is marked failed with
`delivery_unknown` (it may or may not have arrived), so it shows up in `skillet status` and
the outbox metrics instead of sitting pending forever. A reply waiting for its number's new
access token (`needs_token`) past its customer-service window fails as
`outside_service_window`: WhatsApp would refuse it now. Never raises; one tick at a time
across workers (arq's unique cron job id per tick; the update itself is idempotent).
"""

from __future__ import annotations

from typing import Any

import structlog

from channels.credential_queries import fail_parked_outside_window
from delivery.outbox_queries import fail_abandoned_claims
from jobs.context import JobContext

log = structlog.get_logger(__name__)

OUTBOX_SWEEP = "outbox_sweep"


async def outbox_sweep(ctx: JobContext) -> dict[str, Any]:
    """Fail the abandoned claims of every org; returns a JSON summary."""
    metrics = ctx.get("metrics")
    try:
        async with ctx["pool"].acquire() as conn:
            failed = await fail_abandoned_claims(conn, ctx["outbox_abandoned_after_s"])
            window_s = ctx.get("customer_service_window_s")
            expired = [] if window_s is None else await fail_parked_outside_window(conn, window_s)
    except Exception as exc:  # the worker must outlive a failing sweep: the next one retries
        log.error("outbox.sweep_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    for outbox_id, organization_id in failed:
        log.error(
            "outbox.failed",
            outbox_id=str(outbox_id),
            organization_id=str(organization_id),
            code="delivery_unknown",
            error="send interrupted after its claim; not re-sent",
        )
        if metrics is not None:
            metrics.delivery("failed", "delivery_unknown")
    for outbox_id, organization_id in expired:
        log.error(
            "outbox.failed",
            outbox_id=str(outbox_id),
            organization_id=str(organization_id),
            code="outside_service_window",
            error="waited for a new access token until the customer-service window closed",
        )
        if metrics is not None:
            metrics.delivery("failed", "outside_service_window")
    summary: dict[str, Any] = {"status": "ok", "failed": len(failed)}
    if expired:
        summary["outside_window"] = len(expired)
    return summary
