"""arq job `handle_message_echo`: settle an echo of a message one of our numbers sent.

The webhook stored it pending and enqueued this job a grace (SKILLET_ECHO_GRACE_S) later, so
the echo of a reply skillet has just sent, which may arrive before that send's provider id is
stored, is never taken for the owner's. One statement (skillet_settle_echo) decides: ours
(an id our sends got back, or part of a reply in flight: recorded, nothing else), or the
owner's phone (stored as the business's message, author 'phone', never sent again; the
conversation goes to `human`, held by `phone`, so the agent stays silent). Still too early
(a job run before its time): retried when the grace has passed. Idempotent: a second run
finds the echo settled and changes nothing.
"""

from __future__ import annotations

from typing import Any

import structlog
from arq import Retry

from core.tenancy import org_connection
from inbox.echo_queries import EchoOutcome, settle_echo
from jobs.context import JobContext
from jobs.payloads import EchoPayload

log = structlog.get_logger(__name__)

# Past the grace: the retry lands after it, not on its edge.
WAIT_SLACK_S = 0.2


async def handle_message_echo(ctx: JobContext, raw: dict[str, Any]) -> dict[str, Any]:
    payload = EchoPayload.model_validate(raw)
    org = payload.organization_id
    async with org_connection(ctx["pool"], org) as conn:
        settled = await settle_echo(conn, org, payload.echo_id, grace_s=ctx["echo_grace_s"])
    bound = {"organization_id": str(org), "echo_id": str(payload.echo_id)}
    if settled.outcome is EchoOutcome.WAIT:
        raise Retry(defer=(settled.wait_s or 0.0) + WAIT_SLACK_S)
    if settled.decided and settled.outcome is EchoOutcome.PHONE:
        log.info(
            "echo.phone",
            conversation_id=str(settled.conversation_id),
            mode_before=settled.mode_before,
            **bound,
        )
        metrics = ctx.get("metrics")
        if settled.mode_before == "agent" and metrics is not None:
            metrics.handed_off("phone")
    elif settled.decided:
        log.info("echo.ours", **bound)
    return {"outcome": settled.outcome.value, "decided": settled.decided}
