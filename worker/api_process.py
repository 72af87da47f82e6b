"""Running the admin API: open its pool (as the group role skillet_api), queue, the rate
limiter's Redis client and S3 client, serve until told to stop, close in reverse order."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import structlog

from api.app import build_app
from api.client_address import parse_trusted_proxies
from api.rate_limit import RateLimits, RedisCounters, open_counter_redis
from api.routing import ApiDeps
from channels.connect import Prover
from channels.presence import ChannelPresence
from core.address_guard import AddressGuard, GuardedResolver
from core.clock import system_clock
from core.db import create_pool
from core.db_roles import API_ROLE, warn_if_privileged_login
from core.object_store import S3ObjectStore
from jobs.queue import open_queue
from skills.usage import UsageStore
from webhook.server import start_site
from worker.channel_senders import build_presence, http_session, proof_config
from worker.crons import similarity_backend
from worker.resources import s3_client
from worker.settings import Settings

log = structlog.get_logger(__name__)


def _uncounted(kind: str, call: str) -> None:
    return None  # the API process exports no metrics of its own: the log line says it


def rate_limits(settings: Settings) -> RateLimits:
    return RateLimits(
        auth_failures_per_minute=settings.api_auth_failures_per_minute,
        key_requests_per_minute=settings.api_key_requests_per_minute,
        trusted_proxies=parse_trusted_proxies(settings.api_trusted_proxies),
        redis_timeout_s=settings.api_rate_limit_timeout_s,
    )


async def serve_api(settings: Settings, host: str, port: int, stop: asyncio.Event) -> None:
    """Serve until `stop` is set. Every query runs as skillet_api, under row-level security."""
    async with contextlib.AsyncExitStack() as stack:
        pool = await create_pool(
            settings.database_url,
            min_size=settings.db_pool_min_size,
            max_size=settings.db_pool_max_size,
            app_role=API_ROLE,
            tenant_secret=settings.tenant_secret_value(),
        )
        stack.push_async_callback(pool.close)
        await warn_if_privileged_login(pool, API_ROLE, settings.database_url)
        queue = await open_queue(settings.redis_url, settings.queue_name)
        stack.push_async_callback(queue.aclose)
        # Its own client: the queue's retries for a minute through a restart; the limiter
        # must give up within its timeout and let the request through.
        limits = rate_limits(settings)
        counter_redis = open_counter_redis(settings.redis_url, limits.redis_timeout_s)
        stack.push_async_callback(counter_redis.aclose)
        # Ownership proofs (channels.connect): the Graph API, WAHA servers; a WAHA URL an
        # org's admin gives must be public (SKILLET_EVENTS_ALLOW_PRIVATE_URLS lifts that).
        # Connections go only to the addresses the guard checked (no DNS rebinding).
        guard = AddressGuard(allow_private=settings.events_allow_private_urls)
        connector = aiohttp.TCPConnector(resolver=GuardedResolver(guard), use_dns_cache=False)
        http = await stack.enter_async_context(
            aiohttp.ClientSession(connector=connector, trust_env=False)
        )
        prover = Prover(http, proof_config(settings), guard=guard)
        # Read marks of the conversations people open (the senders' own client, as the
        # worker's: a number's own WAHA server is checked at each call by the sender).
        send_http = await stack.enter_async_context(http_session(settings))
        presence = build_presence(settings, send_http, pool, _uncounted)
        if isinstance(presence, ChannelPresence):
            stack.push_async_callback(presence.aclose)
        client = await stack.enter_async_context(s3_client(settings))
        store = S3ObjectStore(client, settings.s3_bucket)
        await store.ensure_bucket()
        deps = ApiDeps(
            pool=pool,
            store=store,
            queue=queue,
            clock=system_clock,
            usage=UsageStore(system_clock),
            package_limits=settings.package_limits(),
            rate_limit_counters=RedisCounters(counter_redis, limits.redis_timeout_s),
            rate_limits=limits,
            events_allow_private_urls=settings.events_allow_private_urls,
            prover=prover,
            max_injected_skills=settings.max_injected_skills,
            rehearsal_days=settings.rehearsal_days,
            similarity=similarity_backend(settings),
            console_public_url=settings.console_public_url,
            model_prices=settings.prices(),
            presence=presence,
        )
        runner, bound = await start_site(build_app(deps), host, port)
        stack.push_async_callback(runner.cleanup)
        log.info("api.started", host=host, port=bound, similarity=deps.similarity.name)
        await stop.wait()
        log.info("api.stopping")
