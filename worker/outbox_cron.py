"""Every minute: replies whose send was interrupted after its claim become `failed`.

A reply is claimed before it is sent (at most once through a channel), so a worker killed
mid-send, or a job cancelled by its timeout, leaves a `pending` row that nobody will send
again. Once the claim is older than any send can last, the row is marked failed with
`delivery_unknown` (it may or may not have arrived), so it shows up in `skillet status` and
the outbox metrics instead of sitting pending forever. Never raises; one tick at a time
across workers (arq's unique cron job id per tick; the update itself is idempotent).
"""

from __future__ import annotations

from typing import Any

import structlog
from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from core.tenancy import system_connection
from turn.queries import fail_abandoned_claims
from worker.curator_cron import within_turn_timeout
from worker.metrics import WorkerMetrics
from worker.settings import Settings

log = structlog.get_logger(__name__)

OUTBOX_SWEEP = "outbox_sweep"
SWEEP_TIMEOUT_S = 30
# arq re-runs a dead worker's job after its timeout + 10 s; a claim outliving that by a
# margin belongs to a send that can no longer be in flight.
CLAIM_MARGIN_S = 30


def abandoned_after_s(settings: Settings) -> float:
    return float(settings.job_timeout_s + CLAIM_MARGIN_S)


async def outbox_sweep(ctx: dict[str, Any]) -> dict[str, Any]:
    """Fail the abandoned claims of every org; returns a JSON summary."""
    metrics: WorkerMetrics | None = ctx.get("metrics")
    try:
        async with system_connection(ctx["pool"]) as conn:
            failed = await fail_abandoned_claims(conn, abandoned_after_s(ctx["settings"]))
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
    return {"status": "ok", "failed": len(failed)}


def _timeout_s(settings: Settings) -> int:
    return within_turn_timeout(SWEEP_TIMEOUT_S, settings)


def outbox_cron_job(settings: Settings) -> CronJob:
    return cron(
        outbox_sweep,
        name=OUTBOX_SWEEP,
        second={30},  # off the curator's second 0
        timeout=_timeout_s(settings),
        max_tries=1,
    )


def outbox_function(settings: Settings) -> Function:
    """For a worker that does not schedule the sweep but may pick up an enqueued one."""
    return func(outbox_sweep, name=OUTBOX_SWEEP, timeout=_timeout_s(settings), max_tries=1)
