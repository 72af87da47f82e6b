"""Shared pieces of the events webhook tests: a receiver on 127.0.0.1 that checks each
event's signature, an org with a conversation, and a delivery pass by a real burst worker."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from aiohttp import web

from events.signature import EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signature_valid
from jobs.events_delivery import EVENTS_DELIVERY
from jobs.queue import open_queue
from tests.integration.support import create_org, run_burst
from webhook.server import start_site
from worker.settings import Settings

SECRET = "segredo-dos-eventos-0123456789"
CONTACT = "5511988887777"


@dataclass(frozen=True)
class Received:
    event_type: str | None
    event_id: str | None
    signed: bool  # the signature held under SECRET
    body: dict[str, Any]


@dataclass
class EventsReceiver:
    """Answers each POST with the next of `statuses` (then 200) and keeps what it got."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    url: str = ""
    delay_s: float = 0.0  # before each answer

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self.received.append(
            Received(
                event_type=request.headers.get(EVENT_HEADER),
                event_id=request.headers.get(EVENT_ID_HEADER),
                signed=signature_valid(SECRET, raw, request.headers.get(SIGNATURE_HEADER)),
                body=json.loads(raw),
            )
        )
        status = self.statuses.pop(0) if self.statuses else 200
        await asyncio.sleep(self.delay_s)
        return web.json_response({"ok": status < 300}, status=status)


@asynccontextmanager
async def events_receiver(
    statuses: list[int] | None = None, delay_s: float = 0.0
) -> AsyncIterator[EventsReceiver]:
    receiver = EventsReceiver(statuses=list(statuses or []), delay_s=delay_s)
    app = web.Application()
    app.router.add_post("/hook", receiver.handle)
    runner, port = await start_site(app, "127.0.0.1", 0)
    receiver.url = f"http://127.0.0.1:{port}/hook"
    try:
        yield receiver
    finally:
        await runner.cleanup()


async def org_with_conversation(
    db: asyncpg.Connection, url: str | None, name: str = "Padaria"
) -> tuple[uuid.UUID, uuid.UUID]:
    """An org (its events URL set by the owner, unchecked, when given) and a conversation."""
    org = await create_org(db, name)
    if url is not None:
        await db.execute(
            "insert into org_event_settings (organization_id, url, secret) values ($1, $2, $3)",
            org,
            url,
            SECRET,
        )
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id)"
        " values ($1, 'whatsapp', $2) returning id",
        org,
        CONTACT,
    )
    return org, conversation


async def deliver(settings: Settings) -> None:
    """One `events_delivery` pass, run by a real burst worker (as another worker's cron
    would enqueue it)."""
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        assert await redis.enqueue_job(EVENTS_DELIVERY, _job_id=f"events-{uuid.uuid4()}")
    finally:
        await redis.aclose()
    await run_burst(settings)


async def event_rows(db: asyncpg.Connection) -> list[asyncpg.Record]:
    return await db.fetch(
        "select id, organization_id, type, status, attempts, last_error from org_events"
        " order by created_at, id"
    )
