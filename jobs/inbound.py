"""arq job `handle_inbound_message`: validate the payload, run the turn, map errors."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import structlog
from arq import Retry
from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from conversation.holder import ConversationWakeup, TurnDeps, TurnOutcome, run_conversation
from core.db_errors import TRANSIENT_DATABASE_ERRORS
from core.errors import SkilletError
from jobs.context import JobContext
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload
from jobs.queries import insert_dead_letter
from jobs.serialization import UNDECODABLE_JOB

log = structlog.get_logger(__name__)

# Failures where a later try can succeed: the database or network blinked.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    *TRANSIENT_DATABASE_ERRORS,
    RedisConnectionError,  # the queue blinked (a sweep enqueues, a heartbeat writes)
    RedisTimeoutError,
)


async def handle_inbound_message(ctx: JobContext, payload: dict[str, Any]) -> dict[str, Any]:
    """Run one turn; return a JSON summary. Never drops a job silently."""
    job_id = ctx.get("job_id", "")
    tries = ctx.get("job_try", 1)
    try:
        message = ConversationPayload.model_validate(payload)
    except ValidationError as exc:
        # A malformed payload never gets better: dead-letter it at once.
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        await _dead_letter(ctx, payload, "invalid_payload", detail)
        return {"status": "rejected", "code": "invalid_payload"}
    with structlog.contextvars.bound_contextvars(
        job_id=job_id, job_try=tries, organization_id=str(message.organization_id)
    ):
        deadline = asyncio.timeout(ctx.get("turn_deadline_s"))
        try:
            async with deadline:
                outcome = await _run(ctx["turn_deps"], message, job_id)
        except SkilletError as exc:
            return await _handle_failure(ctx, payload, message, exc.code, str(exc), exc.retryable)
        except TimeoutError as exc:
            # Ours (inside arq's timeout), or a network one: a retry, then a dead letter.
            code = "turn_deadline" if deadline.expired() else "transient_error"
            return await _handle_failure(ctx, payload, message, code, repr(exc), True)
        except TRANSIENT_ERRORS as exc:
            return await _handle_failure(ctx, payload, message, "transient_error", repr(exc), True)
        except asyncpg.PostgresError as exc:  # refused on content (e.g. DataError): final
            code = "database_rejected"
            return await _handle_failure(ctx, payload, message, code, repr(exc), False)
        except Exception as exc:  # a bug: never an arq-only failure with no trace of its own
            log.exception("turn.unexpected_error")
            code = "unexpected_error"
            return await _handle_failure(ctx, payload, message, code, repr(exc), True)
        log.info(
            "turn.finished",
            status=outcome.status,
            matched=[name for name, _ in outcome.matched],
            probes=list(outcome.probes),
            steps=outcome.steps,
            prefix_sha256=outcome.prefix_sha256,
            # Its `*_tokens` keys are counts: the log redactor keeps those.
            usage=outcome.usage.to_json() if outcome.usage else None,
        )
        return {
            "status": outcome.status,
            "inbound_id": str(outcome.inbound_id),
            "matched": [{"name": n, "version_id": str(v)} for n, v in outcome.matched],
            "probes": list(outcome.probes),
            "tools": [c.name for c in outcome.tool_calls],
            "prefix_sha256": outcome.prefix_sha256,
            "usage": outcome.usage.to_json() if outcome.usage else None,
            "answered": list(outcome.answered),
        }


async def _run(deps: TurnDeps, message: ConversationPayload, job_id: str) -> TurnOutcome:
    wakeup = ConversationWakeup(
        message.organization_id, message.conversation_id, message.inbound_id, message.message_id
    )
    return await run_conversation(deps, wakeup, job_id=job_id)


async def undecodable_job(ctx: JobContext, kept: str) -> dict[str, Any]:
    """A job whose bytes were not a JSON job (jobs.serialization): dead-lettered at once."""
    log.error("job.undecodable", job_id=ctx.get("job_id", ""))
    await _dead_letter(
        ctx, {"undecodable": kept}, "undecodable_job", "not a JSON job", function=UNDECODABLE_JOB
    )
    return {"status": "rejected", "code": "undecodable_job"}


async def _handle_failure(
    ctx: JobContext,
    payload: dict[str, Any],
    message: ConversationPayload,
    code: str,
    error: str,
    retryable: bool,
) -> dict[str, Any]:
    tries = ctx.get("job_try", 1)
    if retryable and tries < ctx.get("max_tries", 5):
        log.warning("turn.retrying", code=code, error=error[:300])
        raise Retry(defer=ctx.get("retry_defer_s", 2.0) * tries)
    log.error("turn.failed", code=code, error=error[:300])
    await _dead_letter(ctx, payload, code, error, message.organization_id)
    return {"status": "failed", "code": code}


async def _dead_letter(
    ctx: JobContext,
    payload: Any,
    code: str,
    error: str,
    organization_id: uuid.UUID | None = None,
    function: str = HANDLE_INBOUND_MESSAGE,
) -> None:
    """`organization_id` only from a payload that validated: that org may then see the row."""
    try:
        async with ctx["pool"].acquire() as conn:
            await insert_dead_letter(
                conn,
                job_id=ctx.get("job_id", ""),
                function=function,
                payload=payload,
                error_code=code,
                error=error,
                tries=ctx.get("job_try", 1),
                organization_id=organization_id,
            )
    except TRANSIENT_ERRORS as exc:
        # Without a dead-letter row the job must stay visible: let arq retry it.
        log.error("job.dead_letter_failed", code=code, error=repr(exc)[:300])
        raise Retry(defer=ctx.get("retry_defer_s", 2.0)) from exc
