"""Running the webhook: open its Postgres pool and queue, serve until told to stop, close."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import aiohttp
import structlog
from aiohttp import web

from channels.waha_lids import WahaLidLookup
from core.db import create_pool
from core.db_roles import WEBHOOK_ROLE, warn_if_privileged_login
from jobs.queue import open_queue
from webhook.app import build_app
from webhook.config import WebhookConfig

log = structlog.get_logger(__name__)

SHUTDOWN_TIMEOUT_S = 10.0  # in-flight requests get this long after a stop


@dataclass(frozen=True)
class ServerConfig:
    host: str
    port: int
    database_url: str
    redis_url: str
    queue_name: str
    db_pool_max_size: int = 5
    tenant_secret: str | None = field(default=None, repr=False)  # core.tenant_key


async def start_site(
    app: web.Application, host: str, port: int, *, shutdown_timeout_s: float = SHUTDOWN_TIMEOUT_S
) -> tuple[web.AppRunner, int]:
    """Serve `app` on host:port (0 = any free port); returns the runner and the bound port."""
    # No access log: Meta's handshake carries the verify token in the query string.
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=shutdown_timeout_s)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound: int = runner.addresses[0][1]
    return runner, bound


async def open_lid_lookup(
    stack: contextlib.AsyncExitStack, webhook: WebhookConfig
) -> WahaLidLookup | None:
    """WAHA's lid -> phone map when configured; its HTTP session closes with `stack`."""
    if not webhook.waha_base_url:
        return None
    timeout = aiohttp.ClientTimeout(total=webhook.lid_lookup_timeout_s)
    http = await stack.enter_async_context(aiohttp.ClientSession(timeout=timeout))
    return WahaLidLookup(http, webhook.waha_base_url, webhook.waha_api_key)


async def serve(webhook: WebhookConfig, server: ServerConfig, stop: asyncio.Event) -> None:
    """Serve until `stop` is set; closes only what it opened, in reverse order."""
    async with contextlib.AsyncExitStack() as stack:
        # As skillet_webhook: an org's rows only once an event is routed to it, and before
        # that only the narrow lookups of its channel (skillet_channel_by_address,
        # skillet_waha_channel_key).
        pool = await create_pool(
            server.database_url,
            min_size=1,
            max_size=server.db_pool_max_size,
            app_role=WEBHOOK_ROLE,
            tenant_secret=server.tenant_secret,
        )
        stack.push_async_callback(pool.close)
        await warn_if_privileged_login(pool, WEBHOOK_ROLE, server.database_url)
        queue = await open_queue(server.redis_url, server.queue_name)
        stack.push_async_callback(queue.aclose)
        lids = await open_lid_lookup(stack, webhook)
        runner, port = await start_site(
            build_app(webhook, pool=pool, queue=queue, lids=lids), server.host, server.port
        )
        stack.push_async_callback(runner.cleanup)
        log.info(
            "webhook.started",
            host=server.host,
            port=port,
            cloud_api=webhook.app_secret is not None,
            # WAHA channels with a key of their own are served without the global one.
            waha_global_key=webhook.waha_hmac_key is not None,
        )
        await stop.wait()
        log.info("webhook.stopping")
