"""Enqueuing jobs with the queue's serializer and idempotent job ids (webhook and CLI use this)."""

from __future__ import annotations

import uuid
from dataclasses import fields, replace
from datetime import UTC, datetime
from typing import Any, cast

import structlog
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from arq.constants import job_key_prefix, result_key_prefix
from arq.jobs import Job, serialize_job
from arq.utils import timestamp_ms
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from inbox.message import InboundMessage
from inbox.queries import PersistedInbound
from inbox.store import store_inbound
from jobs import serialization
from jobs.payloads import (
    HANDLE_INBOUND_MESSAGE,
    HANDLE_MESSAGE_ECHO,
    ConversationPayload,
    EchoPayload,
    echo_job_id,
    inbound_job_id,
)

log = structlog.get_logger(__name__)

# A Redis restart or failover drops connections: commands retry with backoff for about a
# minute instead of failing (arq's loop would die on the first ConnectionError).
REDIS_RETRY_ATTEMPTS = 40
REDIS_RETRY_MAX_DELAY_S = 2.0


class _RedisSettings(RedisSettings):
    """arq's settings, whose generated repr would print the password: this one masks it."""

    def __repr__(self) -> str:
        return RedisSettings.__repr__(replace(self, password="***" if self.password else None))


def redis_settings(redis_url: str) -> RedisSettings:
    """arq's connection settings for `redis_url`, reconnecting through restarts."""
    parsed = RedisSettings.from_dsn(redis_url)  # builds arq's own class, whatever `cls` is
    values = {f.name: getattr(parsed, f.name) for f in fields(RedisSettings) if f.init}
    values.update(
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
        retry=Retry(
            ExponentialBackoff(cap=REDIS_RETRY_MAX_DELAY_S, base=0.05), REDIS_RETRY_ATTEMPTS
        ),
    )
    return _RedisSettings(**values)


async def open_queue(redis_url: str, queue_name: str) -> ArqRedis:
    """An arq Redis pool that writes JSON jobs to `queue_name`; the caller closes it."""
    return await create_pool(
        redis_settings(redis_url),
        job_serializer=serialization.dumps,
        job_deserializer=serialization.loads,
        default_queue_name=queue_name,
    )


async def enqueue_wakeup(
    redis: ArqRedis,
    organization_id: uuid.UUID,
    persisted: PersistedInbound,
    message_id: str,
    *,
    coalesce_ms: int = 0,
    job_id: str | None = None,
) -> Any:
    """Wake the conversation of a stored message; None when there is nothing to do (see
    PersistedInbound.wants_wakeup) or the job is already queued (same message id).

    The job carries ids only and starts `coalesce_ms` later, so messages typed in quick
    succession are answered together. If the enqueue fails, the message is stored: the
    conversation sweep wakes it. `job_id` replaces the message's own (inbound_job_id) for a
    deliberate second run: a requeued dead letter, whose first job's result arq still keeps
    under the original id.
    """
    if not persisted.wants_wakeup:
        return None
    wakeup = ConversationPayload(
        organization_id=organization_id,
        conversation_id=persisted.conversation_id,
        inbound_id=persisted.inbound_id,
        message_id=message_id,
    )
    return await enqueue_once(
        redis,
        HANDLE_INBOUND_MESSAGE,
        wakeup.model_dump(mode="json"),
        job_id=job_id or inbound_job_id(organization_id, message_id),
        defer_ms=coalesce_ms,
    )


async def enqueue_echo(
    redis: ArqRedis,
    organization_id: uuid.UUID,
    echo_id: uuid.UUID,
    external_id: str,
) -> Job | None:
    """Settle a stored echo now (the job itself waits while a reply of its conversation is in
    flight, whose provider id may not be stored yet); None when its job is already queued."""
    payload = EchoPayload(organization_id=organization_id, echo_id=echo_id)
    return await enqueue_once(
        redis,
        HANDLE_MESSAGE_ECHO,
        payload.model_dump(mode="json"),
        job_id=echo_job_id(organization_id, external_id),
    )


# arq's enqueue_job in one round trip instead of three (WATCH, EXISTS, MULTI/EXEC): the same
# keys, job bytes and score, the same "None when the job or its result exists", checked and
# written atomically by the script.
_ENQUEUE_ONCE = """
if redis.call('exists', KEYS[1], KEYS[2]) > 0 then return 0 end
redis.call('psetex', KEYS[1], ARGV[1], ARGV[2])
redis.call('zadd', KEYS[3], ARGV[3], ARGV[4])
return 1
"""


async def enqueue_once(
    redis: ArqRedis, function: str, payload: dict[str, Any], *, job_id: str, defer_ms: int = 0
) -> Job | None:
    """Enqueue `function(payload)` under `job_id` for arq's worker, `defer_ms` later; None
    when a job or a result of that id exists (arq's own dedup)."""
    enqueue_time_ms = timestamp_ms()
    score = enqueue_time_ms + defer_ms
    job = serialize_job(
        function, (payload,), {}, None, enqueue_time_ms, serializer=redis.job_serializer
    )
    queue_name = redis.default_queue_name
    # (redis' stubs type every script argument str; bytes and ints are sent as they are)
    written = await cast(Any, redis).eval(
        _ENQUEUE_ONCE,
        3,
        job_key_prefix + job_id,
        result_key_prefix + job_id,
        queue_name,
        defer_ms + redis.expires_extra_ms,
        job,
        score,
        job_id,
    )
    if not written:
        return None
    return Job(job_id, redis=redis, _queue_name=queue_name, _deserializer=redis.job_deserializer)


async def enqueue_inbound(
    pool: Any,
    redis: ArqRedis,
    message: InboundMessage,
    *,
    coalesce_ms: int = 0,
    received_at: datetime | None = None,
    job_id: str | None = None,
) -> Any:
    """Store a message of a named org (its arrival is the order replies follow), then wake
    its conversation (enqueue_wakeup); None when there is nothing to do, e.g. a redelivery
    of a message answered or kept as context, or an id another contact's message is stored
    under."""
    persisted = await store_inbound(pool, message, received_at=received_at or datetime.now(UTC))
    if persisted.foreign:
        log.warning("queue.duplicate_foreign_contact", message_id=message.message_id)
    return await enqueue_wakeup(
        redis,
        message.organization_id,
        persisted,
        message.message_id,
        coalesce_ms=coalesce_ms,
        job_id=job_id,
    )
