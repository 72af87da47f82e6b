"""arq job `followup_tick`: the follow-ups the agent scheduled (schedule_followup), sent when
due.

Once a minute, across orgs, one narrow function (skillet_fire_due_followups) decides every
due follow-up once, locked: skipped when the customer wrote since it was scheduled, opted out
(PARAR), or a person holds the conversation; else committed as a template message with its
outbox row. A job is enqueued at once for each sent one's conversation and the holder hands
it to the channel once (claimed before the send); if that job is lost, the conversation sweep
wakes the conversation (a reply never handed to its channel). Never raises.
"""

from __future__ import annotations

from typing import Any

import structlog

from conversation.followup_queries import fire_due_followups
from jobs.context import JobContext
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload

log = structlog.get_logger(__name__)

FOLLOWUP_TICK = "followup_tick"
# Follow-ups decided per tick at most; the next tick takes the rest.
MAX_PER_TICK = 1_000


async def followup_tick(ctx: JobContext) -> dict[str, Any]:
    """Send the due follow-ups (or skip them, saying why); a JSON summary."""
    try:
        async with ctx["pool"].acquire() as conn:
            fired = await fire_due_followups(conn, MAX_PER_TICK)
        sent = [f for f in fired if f.status == "sent"]
        for followup in sent:
            payload = ConversationPayload(
                organization_id=followup.organization_id,
                conversation_id=followup.conversation_id,
            )
            await ctx["redis"].enqueue_job(
                HANDLE_INBOUND_MESSAGE,
                payload.model_dump(mode="json"),
                _job_id=f"followup:{followup.followup_id}",
            )
    except Exception as exc:  # the worker must outlive a failing tick: the next one retries
        log.error("followup.tick_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    skipped: dict[str, int] = {}
    metrics = ctx.get("metrics")
    for followup in fired:
        if followup.status == "skipped" and followup.reason is not None:
            skipped[followup.reason] = skipped.get(followup.reason, 0) + 1
        if metrics is not None:
            metrics.followup_decided(followup.reason or followup.status)
    if fired:
        log.info("followup.ticked", sent=len(sent), skipped=skipped)
    return {"status": "ok", "sent": len(sent), "skipped": skipped}
