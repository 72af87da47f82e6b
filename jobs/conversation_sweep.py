"""arq job `conversation_sweep`: wake conversations whose messages wait with no holder.

Every message is stored before its job exists, and the lease lives on the conversation row,
so Postgres alone knows what waits. A job can still be lost (Redis wiped or failed over, an
enqueue that failed after the message was stored, a holder that let go after its last
burst); every 15 s this finds conversations with a message older than the coalescing window
still unanswered and no live lease, and enqueues a job for each under a job id of its own
(a killed job's id stays taken in arq until its in-progress key expires). The same sweep
enqueues again the settle job of echoes left pending past their grace (jobs.echo_sweep), and
folds every org's pending Painel counts into its rollups (inbox.insight_queries). Never raises.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import structlog

from inbox.insight_queries import fold_insight_counts
from jobs.context import JobContext
from jobs.echo_sweep import requeue_lost_echoes
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload

log = structlog.get_logger(__name__)

CONVERSATION_SWEEP = "conversation_sweep"
SWEEP_EVERY_S = 15
# Conversations woken per sweep at most; the next sweep takes the rest.
MAX_WOKEN = 1_000

# Across orgs: one narrow function (skillet_conversations_waiting) returns ids only.
LIST_WAITING = "select organization_id, conversation_id from skillet_conversations_waiting($1, $2)"


async def conversation_sweep(ctx: JobContext) -> dict[str, Any]:
    """Enqueue a job per waiting conversation, then per lost echo; returns a JSON summary."""
    echoes = await requeue_lost_echoes(ctx["pool"], ctx["redis"], grace_s=ctx["echo_grace_s"])
    await _fold_insights(ctx)
    try:
        rows = await ctx["pool"].fetch(LIST_WAITING, ctx["sweep_after_s"], MAX_WOKEN)
        bucket = int(time.time() // SWEEP_EVERY_S)
        woken = 0
        for row in rows:
            if await _wake(ctx, row["organization_id"], row["conversation_id"], bucket):
                woken += 1
    except Exception as exc:  # the worker must outlive a failing sweep: the next one retries
        log.error("conversation.sweep_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__, **echoes}
    if woken:
        log.warning("conversation.swept", woken=woken)  # a job was lost somewhere
    return {"status": "ok", "waiting": len(rows), "woken": woken, **echoes}


async def _fold_insights(ctx: JobContext) -> None:
    try:
        async with ctx["pool"].acquire() as conn:
            await fold_insight_counts(conn, None)
    except Exception as exc:  # counts wait for the next sweep, or the Painel's own fold
        log.error("conversation.insight_fold_failed", error=repr(exc)[:300])


async def _wake(
    ctx: JobContext, organization_id: uuid.UUID, conversation_id: uuid.UUID, bucket: int
) -> bool:
    payload = ConversationPayload(organization_id=organization_id, conversation_id=conversation_id)
    job = await ctx["redis"].enqueue_job(
        HANDLE_INBOUND_MESSAGE,
        payload.model_dump(mode="json"),
        _job_id=f"sweep:{conversation_id}:{bucket}",
    )
    return job is not None
