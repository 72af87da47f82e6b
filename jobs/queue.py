"""Enqueuing jobs with the queue's serializer and idempotent job ids (webhook and CLI use this)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from jobs import serialization
from jobs.payloads import HANDLE_INBOUND_MESSAGE, ConversationPayload, InboundMessagePayload
from turn.holder import persist_inbound

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


async def enqueue_inbound(
    pool: Any,
    redis: ArqRedis,
    payload: InboundMessagePayload,
    *,
    coalesce_ms: int = 0,
    received_at: datetime | None = None,
    job_id: str | None = None,
) -> Any:
    """Store the message (its arrival is the order replies follow), then wake its
    conversation; None when there is nothing to do (a redelivery of a message answered or
    kept as context, or an id another contact's message is stored under).

    The job carries ids only and starts `coalesce_ms` later, so messages typed in quick
    succession are answered together. If the enqueue fails, the message is stored: the
    conversation sweep wakes it. `job_id` replaces the message's own (`payload.job_id`) for
    a deliberate second run: a requeued dead letter, whose first job's result arq still
    keeps under the original id.
    """
    persisted = await persist_inbound(
        pool, payload.to_message(), received_at=received_at or datetime.now(UTC)
    )
    if persisted.foreign:
        log.warning("queue.duplicate_foreign_contact", message_id=payload.message_id)
        return None
    if not persisted.created and not persisted.open and persisted.outbox_status != "pending":
        return None  # answered (and handed to its channel) or kept as context before
    wakeup = ConversationPayload(
        organization_id=payload.organization_id,
        conversation_id=persisted.conversation_id,
        inbound_id=persisted.inbound_id,
        message_id=payload.message_id,
    )
    return await redis.enqueue_job(
        HANDLE_INBOUND_MESSAGE,
        wakeup.model_dump(mode="json"),
        _job_id=job_id or payload.job_id,
        _defer_by=timedelta(milliseconds=coalesce_ms) if coalesce_ms else None,
    )
