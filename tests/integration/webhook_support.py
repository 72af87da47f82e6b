"""A real webhook server for tests: signed posts to it, and what it left in the queue."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import asyncpg
from redis.asyncio import Redis

from channels.models import Channel
from channels.queries import insert_channel
from core.channel_kind import ChannelKind
from core.db import create_pool
from core.db_roles import WEBHOOK_ROLE
from jobs.queue import open_queue
from tests.whatsapp_payloads import (
    APP_SECRET,
    VERIFY_TOKEN,
    WAHA_HMAC_KEY,
    cloud_signature,
    encode,
    waha_signature,
)
from webhook.app import CLOUD_API_PATH, WAHA_PATH, build_app
from webhook.config import WebhookConfig
from webhook.server import open_lid_lookup, start_site
from worker.settings import Settings

TEST_CONFIG = WebhookConfig(
    app_secret=APP_SECRET, verify_token=VERIFY_TOKEN, waha_hmac_key=WAHA_HMAC_KEY
)


@dataclass
class Posted:
    status: int
    body: Any


@dataclass
class RunningWebhook:
    url: str
    http: aiohttp.ClientSession

    async def post(self, path: str, data: Any, headers: dict[str, str]) -> Posted:
        async with self.http.post(self.url + path, data=data, headers=headers) as response:
            text = await response.text()
            try:
                body: Any = json.loads(text)
            except ValueError:
                body = text
            return Posted(response.status, body)

    async def post_cloud(
        self, document: Any = None, *, raw: bytes | None = None, signature: str | None = None
    ) -> Posted:
        body = raw if raw is not None else encode(document)
        headers = {"Content-Type": "application/json"}
        headers["X-Hub-Signature-256"] = (
            signature if signature is not None else cloud_signature(body)
        )
        return await self.post(CLOUD_API_PATH, body, headers)

    async def post_waha(
        self, document: Any = None, *, raw: bytes | None = None, signature: str | None = None
    ) -> Posted:
        body = raw if raw is not None else encode(document)
        headers = {
            "Content-Type": "application/json",
            "X-Webhook-Hmac": signature if signature is not None else waha_signature(body),
            "X-Webhook-Hmac-Algorithm": "sha512",
        }
        return await self.post(WAHA_PATH, body, headers)

    async def get(self, path: str, params: dict[str, str]) -> Posted:
        async with self.http.get(self.url + path, params=params) as response:
            return Posted(response.status, await response.text())


@asynccontextmanager
async def running_webhook(
    settings: Settings, config: WebhookConfig = TEST_CONFIG
) -> AsyncIterator[RunningWebhook]:
    """The real app on a free port of 127.0.0.1, on the test's database and queue, its pool
    as `skillet webhook` opens it (the webhook's group role, bindings reset)."""
    # Everything in the stack as it opens: a failure halfway closes what was opened, instead
    # of leaving a Redis client for the garbage collector to report in a later test.
    async with contextlib.AsyncExitStack() as stack:
        pool = await create_pool(
            settings.database_url, min_size=1, max_size=4, app_role=WEBHOOK_ROLE
        )
        stack.push_async_callback(pool.close)
        queue = await open_queue(settings.redis_url, settings.queue_name)
        stack.push_async_callback(queue.aclose)
        lids = await open_lid_lookup(stack, config)
        app = build_app(config, pool=pool, queue=queue, lids=lids)
        runner, port = await start_site(app, "127.0.0.1", 0)
        stack.push_async_callback(runner.cleanup)
        http = await stack.enter_async_context(aiohttp.ClientSession())
        yield RunningWebhook(f"http://127.0.0.1:{port}", http)


STORED_MESSAGE = """
select m.external_id as message_id, c.contact_id, m.body as text, m.kind, m.expects_reply,
       m.agent_id::text, m.organization_id::text
from messages m join conversations c on c.id = m.conversation_id
where m.id = $1
"""


async def queued_payloads(settings: Settings) -> list[dict[str, Any]]:
    """What every job waiting in the test's queue stands for, oldest first: the stored
    message it names (jobs carry ids only), in the fields of the message payload."""
    client = Redis.from_url(settings.redis_url)
    try:
        conn = await asyncpg.connect(settings.database_url)
    except BaseException:
        await client.aclose()
        raise
    try:
        job_ids = await client.zrange(settings.queue_name, 0, -1)
        payloads = []
        for job_id in job_ids:
            raw = await client.get(f"arq:job:{job_id.decode()}")
            wakeup = json.loads(raw)["a"][0]
            stored = await conn.fetchrow(STORED_MESSAGE, uuid.UUID(wakeup["inbound_id"]))
            payloads.append(dict(stored))
        return payloads
    finally:
        await conn.close()
        await client.aclose()


async def connect_number(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    kind: ChannelKind,
    address: str,
    *,
    agent_id: uuid.UUID | None = None,
    reply_to_non_text: bool = False,
) -> Channel:
    channel = await insert_channel(
        conn,
        organization_id=organization_id,
        agent_id=agent_id,
        kind=kind,
        address=address,
        display_phone=None,
        reply_to_non_text=reply_to_non_text,
    )
    assert channel is not None
    return channel
