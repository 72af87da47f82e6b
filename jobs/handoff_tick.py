"""arq job `handoff_tick`: the clock of the conversations people hold or are asked for.

Once a minute, across orgs, one narrow function (skillet_conversation_mode_tick) returns to
the agent every conversation a person held with no message from a person for
SKILLET_HUMAN_IDLE_S (what no one answered stays context), and commits one notice (the
agent's handoff_wait_notice, else the pt-BR default) to each customer left waiting for
SKILLET_HANDOFF_WAIT_S. A notice is an outbox row like any reply: a job is enqueued for its
conversation at once and the holder hands it to the channel once (claimed before the send);
if that job is lost, the conversation sweep wakes the conversation (a reply never handed to
its channel). Then the gauge of conversations by mode is refreshed. Never raises.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import structlog

from conversation.handoff.texts import HANDOFF_WAIT_NOTICE_DEFAULT
from jobs.context import JobContext
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload

log = structlog.get_logger(__name__)

HANDOFF_TICK = "handoff_tick"
# Conversations returned and noticed per tick at most (each); the next tick takes the rest.
MAX_PER_TICK = 1_000

MODE_TICK = """
select organization_id, conversation_id, change
from skillet_conversation_mode_tick($1, $2, $3, $4)
"""
MODE_COUNTS = "select mode, conversations from skillet_conversation_mode_counts()"


async def handoff_tick(ctx: JobContext) -> dict[str, Any]:
    """Return idle conversations, notice waiting customers; a JSON summary."""
    idle_s, wait_s = ctx["handoff_idle_s"], ctx["handoff_wait_s"]
    try:
        rows = await ctx["pool"].fetch(
            MODE_TICK, float(idle_s), float(wait_s), HANDOFF_WAIT_NOTICE_DEFAULT, MAX_PER_TICK
        )
        noticed = [r for r in rows if r["change"] == "notice"]
        for row in noticed:
            await _wake(ctx, row["organization_id"], row["conversation_id"])
        counts = {r["mode"]: int(r["conversations"]) for r in await ctx["pool"].fetch(MODE_COUNTS)}
    except Exception as exc:  # the worker must outlive a failing tick: the next one retries
        log.error("handoff.tick_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    metrics = ctx.get("metrics")
    if metrics is not None:
        metrics.conversations_in_mode(counts)
    returned = len(rows) - len(noticed)
    if rows:
        log.info("handoff.ticked", returned=returned, noticed=len(noticed))
    return {"status": "ok", "returned": returned, "noticed": len(noticed), "modes": counts}


async def _wake(ctx: JobContext, organization_id: uuid.UUID, conversation_id: uuid.UUID) -> None:
    payload = ConversationPayload(organization_id=organization_id, conversation_id=conversation_id)
    await ctx["redis"].enqueue_job(
        HANDLE_INBOUND_MESSAGE,
        payload.model_dump(mode="json"),
        _job_id=f"notice:{conversation_id}:{time.time_ns()}",
    )
