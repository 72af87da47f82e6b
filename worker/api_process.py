"""Running the admin API: open its pool (as the non-owner app role), queue and S3 client,
serve until told to stop, close in reverse order."""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from api.app import build_app
from api.routing import ApiDeps
from core.clock import system_clock
from core.db import create_pool
from core.errors import SkilletError
from jobs.queue import open_queue
from skills.storage import S3ObjectStore
from skills.usage import UsageStore
from webhook.server import start_site
from worker.resources import s3_client
from worker.settings import Settings

log = structlog.get_logger(__name__)


class ApiNotConfigured(SkilletError):
    code = "api_not_configured"


async def serve_api(settings: Settings, host: str, port: int, stop: asyncio.Event) -> None:
    """Serve until `stop` is set. Refuses to start without an app role: the API must never
    query as the owner, to whom row-level security does not apply."""
    if not settings.db_app_role:
        raise ApiNotConfigured(
            "the admin API runs only under row-level security: set SKILLET_DB_APP_ROLE "
            "(default skillet_app, created by `skillet migrate`)"
        )
    async with contextlib.AsyncExitStack() as stack:
        pool = await create_pool(
            settings.database_url,
            min_size=settings.db_pool_min_size,
            max_size=settings.db_pool_max_size,
            app_role=settings.db_app_role,
        )
        stack.push_async_callback(pool.close)
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
