"""arq job `events_retention`: settled webhook events are deleted after their retention, and
the people sign-in limit's failures once past its hour.

Every hour, across orgs: the events delivered or given up (failed) more than
SKILLET_EVENTS_RETENTION_DAYS ago are deleted through skillet_prune_org_events, a batch per
statement (each its own short transaction, so no run holds long locks), until a batch comes
back short or the per-run cap is reached (the rest goes next hour). An event still pending
(due, retrying, or claimed by a delivery in flight) is never deleted. Never raises: the next
run retries.

The failed sign-ins (api.console.person_auth counts them per e-mail over one hour) go through
skillet_forget_sign_in_failures, batched the same way: a row older than the hour counts for
nothing, and an e-mail that failed once and never again would otherwise keep it forever.
"""

from __future__ import annotations

from typing import Any

import structlog

from jobs.context import JobContext

log = structlog.get_logger(__name__)

EVENTS_RETENTION = "events_retention"
BATCH = 1_000
MAX_BATCHES_PER_RUN = 100  # the rest waits for the next run (bounded time per run)

PRUNE_EVENTS = "select skillet_prune_org_events($1, $2)"
FORGET_SIGN_IN_FAILURES = "select skillet_forget_sign_in_failures($1)"


async def delete_settled_events(
    pool: Any, *, keep_days: int, batch: int = BATCH, max_batches: int = MAX_BATCHES_PER_RUN
) -> int:
    """Delete settled events older than `keep_days`; how many were deleted."""
    deleted = 0
    for _ in range(max_batches):
        gone = int(await pool.fetchval(PRUNE_EVENTS, keep_days, batch) or 0)
        deleted += gone
        if gone < batch:
            break
    return deleted


async def forget_sign_in_failures(
    pool: Any, *, batch: int = BATCH, max_batches: int = MAX_BATCHES_PER_RUN
) -> int:
    """Delete failed sign-ins older than the limit's hour; how many were deleted."""
    deleted = 0
    for _ in range(max_batches):
        gone = int(await pool.fetchval(FORGET_SIGN_IN_FAILURES, batch) or 0)
        deleted += gone
        if gone < batch:
            break
    return deleted


async def events_retention(ctx: JobContext) -> dict[str, Any]:
    metrics = ctx.get("metrics")  # None: called outside a worker
    try:
        deleted = await delete_settled_events(ctx["pool"], keep_days=ctx["events_retention_days"])
        forgotten = await forget_sign_in_failures(ctx["pool"])
    except Exception as exc:  # the worker must outlive a failing run: the next one retries
        log.error("events.retention_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    if metrics is not None:
        metrics.events_pruned(deleted)
    if deleted:
        log.info("events.retention_deleted", events=deleted)
    if forgotten:
        log.info("people.sign_in_failures_forgotten", rows=forgotten)
    return {"status": "ok", "deleted": deleted, "sign_in_failures_deleted": forgotten}
