"""arq job `template_sync`: once a day, every Cloud API number's templates read again from
its WABA (channels.template_sync), as `skillet channels templates sync` does for one.

Across orgs only the list of numbers is read (skillet_template_channels); each number's
WABA id and token are then read under its org (skillet_channel_secrets: its own token, else
the deployment's), with no connection held during the Graph API calls. A number that fails
(no WABA id, a refused token, a server down) is logged and counted; the others go on. Never
raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
import structlog

from channels.credential_queries import fetch_channel_secrets
from channels.queries import fetch_channel_by_address
from channels.template_queries import replace_templates
from channels.template_refresh import sync_target
from channels.template_sync import GraphAccess, fetch_templates
from core.channel_kind import ChannelKind
from core.errors import SkilletError
from core.tenancy import org_connection
from jobs.context import JobContext

log = structlog.get_logger(__name__)

TEMPLATE_SYNC = "template_sync"
MAX_CHANNELS = 10_000  # numbers synced per run at most


@dataclass(frozen=True)
class TemplateSyncConfig:
    base_url: str
    global_token: str | None = field(repr=False)  # SKILLET_WHATSAPP_ACCESS_TOKEN
    timeout_s: float = 10.0


LIST_CHANNELS = "select organization_id, channel_id, address from skillet_template_channels($1)"


async def _sync_one(
    pool: Any, session: aiohttp.ClientSession, config: TemplateSyncConfig, row: Any
) -> int:
    org = row["organization_id"]
    async with org_connection(pool, org) as conn:
        channel = await fetch_channel_by_address(conn, ChannelKind.CLOUD_API, row["address"])
        secrets = await fetch_channel_secrets(conn, ChannelKind.CLOUD_API, row["address"])
    if channel is None:
        return 0
    target = sync_target(channel, secrets.access_token, config.global_token)
    access = GraphAccess(config.base_url, target.access_token, config.timeout_s)
    listing = await fetch_templates(session, access, target.waba_id)
    async with org_connection(pool, org) as conn:
        await replace_templates(conn, org, channel.id, listing.templates, complete=listing.complete)
    return len(listing.templates)


async def template_sync(ctx: JobContext) -> dict[str, Any]:
    config: TemplateSyncConfig = ctx["templates"]
    pool = ctx["pool"]
    synced = failed = templates = 0
    try:
        rows = await pool.fetch(LIST_CHANNELS, MAX_CHANNELS)
        async with aiohttp.ClientSession() as session:
            for row in rows:
                try:
                    templates += await _sync_one(pool, session, config, row)
                    synced += 1
                except SkilletError as exc:
                    failed += 1
                    log.warning("templates.sync_failed", address=row["address"], code=exc.code)
    except Exception as exc:  # the worker must outlive a failing run: tomorrow's retries
        log.error("templates.run_failed", error=repr(exc)[:300])
        return {"status": "failed", "error": type(exc).__name__}
    log.info("templates.synced", channels=synced, failed=failed, templates=templates)
    return {"status": "ok", "channels": synced, "failed": failed, "templates": templates}
