"""Running the admin API: open its pool (as the group role skillet_api), queue and S3
client, serve until told to stop, close in reverse order."""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from api.app import build_app
from api.routing import ApiDeps
from core.clock import system_clock
from core.db import create_pool
from core.db_roles import API_ROLE, warn_if_privileged_login
from jobs.queue import open_queue
from skills.storage import S3ObjectStore
from skills.usage import UsageStore
from webhook.server import start_site
from worker.resources import s3_client
from worker.settings import Settings

log = structlog.get_logger(__name__)


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
        )
        runner, bound = await start_site(build_app(deps), host, port)
        stack.push_async_callback(runner.cleanup)
        log.info("api.started", host=host, port=bound)
        await stop.wait()
        log.info("api.stopping")
