"""Enqueuing jobs with the queue's serializer and idempotent job ids (webhook and CLI use this)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from arq import create_pool
from arq.connections import ArqRedis, RedisSettings
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from jobs import serialization
from jobs.payloads import HANDLE_INBOUND_MESSAGE, InboundMessagePayload
from turn.mailbox import ConversationKey, Mailbox, MailboxEntry

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
    redis: ArqRedis,
    payload: InboundMessagePayload,
    *,
    coalesce_ms: int = 0,
    job_id: str | None = None,
) -> Any:
    """Enqueue one inbound message; None when the same message is already queued/running/kept.

    `job_id` replaces the message's own (`payload.job_id`) for a deliberate second run: a
    requeued dead letter, whose first job's result arq still keeps under the original id.

    The message enters its conversation's mailbox first, stamped with its arrival time:
    that is the order replies follow, whichever job runs first. The job itself starts
    `coalesce_ms` later, so messages typed in quick succession are answered together.
    """
    key = ConversationKey(payload.organization_id, payload.channel, payload.contact_id)
    entry = MailboxEntry(
        payload.message_id,
        payload.text,
        payload.sent_at,
        datetime.now(UTC),
        kind=payload.kind,
        expects_reply=payload.expects_reply,
    )
    await Mailbox(redis).add(key, entry)
    return await redis.enqueue_job(
        HANDLE_INBOUND_MESSAGE,
        payload.model_dump(mode="json"),
        _job_id=job_id or payload.job_id,
        _defer_by=timedelta(milliseconds=coalesce_ms) if coalesce_ms else None,
    )
