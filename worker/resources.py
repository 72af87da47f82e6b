"""The composition root: open pools and clients from Settings, close them in reverse order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aioboto3
import structlog
from aiobotocore.config import AioConfig
from redis.asyncio import Redis

from channels.presence import ChannelPresence
from conversation.holder import TurnConfig, TurnDeps
from conversation.lease import ConversationLeases
from conversation.metrics import NO_TURN_METRICS
from core.clock import system_clock
from core.db import create_pool
from core.db_roles import WORKER_ROLE, warn_if_privileged_login
from core.object_store import S3ObjectStore
from delivery.contract import Sender
from jobs.dead_letters import DatabaseDeadLetters
from jobs.queue import redis_settings
from skills.usage import UsageStore
from turn.activation_queries import ActivationRow
from turn.activation_writer import write_activation_batch
from turn.activations import ActivationRecorder
from turn.matcher.intent_model import shipped_intent_models
from turn.model import Model
from turn.model_input import InputCaps
from turn.skill_catalog import SkillCatalogCache
from turn.tools.page_cache import StoredPageCache
from worker.channel_senders import build_presence, build_sender, http_session
from worker.media_readers import build_media_reader
from worker.metered import metered_batches, metered_model, metered_sender
from worker.metrics import WorkerMetrics
from worker.model_providers import build_model_registry, model_http
from worker.settings import Settings

log = structlog.get_logger(__name__)


def _uncounted(kind: str, call: str) -> None:
    return None


@dataclass
class Resources:
    pool: Any
    store: S3ObjectStore
    recorder: ActivationRecorder
    turn_deps: TurnDeps
    stack: contextlib.AsyncExitStack
    redis: Any = None  # a Redis client for health checks and heartbeats
    s3: Any = None  # the S3 client behind `store`; health checks use it

    async def close(self) -> None:
        await self.stack.aclose()


@dataclass(frozen=True)
class S3Keys:
    """Explicit S3 credentials; all None means botocore's standard chain finds them
    (env, shared config, instance profile, IRSA web identity)."""

    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None


def s3_credentials(settings: Settings) -> S3Keys:
    """The explicit keys of `settings`, or none (a default `S3Keys`)."""
    if settings.aws_access_key_id is None or settings.aws_secret_access_key is None:
        return S3Keys()
    token = settings.aws_session_token
    return S3Keys(
        access_key_id=settings.aws_access_key_id,
        secret_access_key=settings.aws_secret_access_key.get_secret_value(),
        session_token=None if token is None else token.get_secret_value(),
    )


def s3_client(settings: Settings) -> Any:
    """An async context manager yielding an S3 client for the configured endpoint."""
    keys = s3_credentials(settings)
    return aioboto3.Session().client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region,  # None: botocore's own lookup
        # None is "not given" to botocore: it then resolves credentials itself.
        aws_access_key_id=keys.access_key_id,
        aws_secret_access_key=keys.secret_access_key,
        aws_session_token=keys.session_token,
        config=AioConfig(
            connect_timeout=3,
            read_timeout=10,
            retries={"max_attempts": 2, "mode": "standard"},
            s3={"addressing_style": "path"},
        ),
    )


async def open_resources(
    settings: Settings,
    *,
    model: Model | None = None,
    sender: Sender | None = None,
    metrics: WorkerMetrics | None = None,
) -> Resources:
    """Everything a turn needs; on failure, closes whatever it had opened."""
    # A broken intent model file in the wheel stops the worker here, not at its first turn.
    shipped_intent_models()
    stack = contextlib.AsyncExitStack()
    try:
        pool = await create_pool(
            settings.database_url,
            min_size=settings.db_pool_min_size,
            max_size=settings.db_pool_max_size,
            app_role=WORKER_ROLE,
            tenant_secret=settings.tenant_secret_value(),
        )
        stack.push_async_callback(pool.close)
        await warn_if_privileged_login(pool, WORKER_ROLE, settings.database_url)
        client = await stack.enter_async_context(s3_client(settings))
        store = S3ObjectStore(client, settings.s3_bucket)
        await store.ensure_bucket()

        usage = UsageStore(system_clock)

        async def write(rows: Sequence[ActivationRow]) -> None:
            # A batch spans orgs: written through a narrow function (skillet_record_activations).
            async with pool.acquire() as conn:
                await write_activation_batch(conn, rows)

        recorder = ActivationRecorder(
            metered_batches(write, metrics),
            batch_size=settings.activation_batch_size,
            max_pending=settings.activation_queue_max,
            linger_s=settings.activation_linger_ms / 1000,
        )
        recorder.start()
        # Pushed after the pool: closes (and flushes) before the pool does.
        stack.push_async_callback(recorder.close, settings.activation_shutdown_flush_s)
        queue_settings = redis_settings(settings.redis_url)
        redis = Redis.from_url(
            settings.redis_url,
            retry=queue_settings.retry,
            retry_on_error=queue_settings.retry_on_error,
        )
        stack.push_async_callback(redis.aclose)
        http = await stack.enter_async_context(http_session(settings))
        presence = build_presence(
            settings, http, pool, metrics.presence_failed if metrics else _uncounted
        )
        if isinstance(presence, ChannelPresence):  # closes before the HTTP session does
            stack.push_async_callback(presence.aclose)
        model_client = await stack.enter_async_context(model_http(settings))
    except BaseException:
        await stack.aclose()
        raise
    dead_letters = DatabaseDeadLetters(pool)
    deps = TurnDeps(
        pool=pool,
        store=store,
        # `model` (tests, benchmarks) answers for agents without a provider.
        models=build_model_registry(
            settings, model_client, default=model, wrap=lambda m: metered_model(m, metrics)
        ),
        sender=metered_sender(sender or build_sender(settings, http, pool, store), metrics),
        recorder=recorder,
        catalog=SkillCatalogCache(),
        config=TurnConfig(
            default_persona=settings.default_persona,
            max_steps=settings.model_max_steps,
            max_injected_skills=settings.max_injected_skills,
            reference_max_bytes=settings.reference_max_bytes,
            package_limits=settings.package_limits(),
            opt_words=settings.opt_words(),
            followups_per_conversation=settings.followups_per_conversation,
            input_caps=InputCaps(
                max_message_chars=settings.max_message_chars,
                max_burst_chars=settings.max_burst_chars,
                max_history_chars=settings.max_history_chars,
            ),
        ),
        leases=ConversationLeases(pool, ttl_s=settings.conversation_lease_ms / 1000),
        usage=usage,
        metrics=metrics or NO_TURN_METRICS,
        dead_letters=dead_letters,
        page_cache=StoredPageCache(settings.reference_cache_bytes),
        media=build_media_reader(settings, http, store, dead_letters),
        presence=presence,
    )
    return Resources(
        pool=pool,
        store=store,
        recorder=recorder,
        turn_deps=deps,
        stack=stack,
        redis=redis,
        s3=client,
    )


async def open_resources_with_retry(
    settings: Settings, *, attempts: int = 10, **kwargs: Any
) -> Resources:
    """Services may still be starting (compose, dev up): retry with backoff, then give up."""
    delay_s = 0.5
    for attempt in range(1, attempts + 1):
        try:
            return await open_resources(settings, **kwargs)
        except (OSError, ConnectionError, TimeoutError) as exc:
            if attempt == attempts:
                raise
            log.warning("worker.startup_retry", attempt=attempt, error=repr(exc)[:200])
            await asyncio.sleep(delay_s)
            delay_s = min(delay_s * 2, 5.0)
    raise AssertionError("unreachable")
