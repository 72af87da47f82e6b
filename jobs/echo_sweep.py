"""Echoes whose settle job was lost, enqueued again (run by the conversation sweep).

The webhook stores an echo pending before it enqueues `handle_message_echo`; if Redis loses
that job (wiped, failed over, or the enqueue failed after the row was stored), the echo would
stay pending forever and the owner's reply from the phone would never take the conversation.
Postgres alone knows what is pending: every sweep lists the echoes pending for longer than
the grace plus a margin (skillet_echoes_pending_since, across orgs, ids only) and enqueues
each one's job under its own deterministic id (jobs.payloads.echo_job_id): a job still
queued, deferred or running has that id, so the enqueue is a no-op; and should a late job
and a swept one both run, skillet_settle_echo locks the echo and settles it once (the second
finds it settled and changes nothing). Never raises.
"""

from __future__ import annotations

from typing import Any

import structlog

from jobs.queue import enqueue_echo

log = structlog.get_logger(__name__)

# Past the grace: the webhook's own job has had time to run (and to retry a short outage).
ECHO_SWEEP_MARGIN_S = 30.0
# Echoes enqueued per sweep at most; the next sweep takes the rest.
MAX_ECHOES = 500

LIST_PENDING = (
    "select organization_id, echo_id, external_id from skillet_echoes_pending_since($1, $2)"
)


async def requeue_lost_echoes(pool: Any, redis: Any, *, grace_s: float) -> dict[str, Any]:
    """Enqueue the settle job of every echo pending past its grace + margin; a summary."""
    try:
        rows = await pool.fetch(LIST_PENDING, grace_s + ECHO_SWEEP_MARGIN_S, MAX_ECHOES)
        requeued = 0
        for row in rows:
            job = await enqueue_echo(
                redis, row["organization_id"], row["echo_id"], row["external_id"]
            )
            requeued += job is not None
    except Exception as exc:  # the sweep must outlive a failure: the next one retries
        log.error("echo.sweep_failed", error=repr(exc)[:300])
        return {"echoes_status": "failed", "echoes_error": type(exc).__name__}
    if requeued:
        log.warning("echo.swept", requeued=requeued)  # a settle job was lost somewhere
    return {"echoes_pending": len(rows), "echoes_requeued": requeued}
