"""Business hours in the turn, through the webhook, real burst workers and the fake WAHA:
after hours a handoff's acknowledgement says when a person will be there, and an org that
chose `away` sends one away message per conversation per closed period, never while a
person holds it, and answers again once open.

"Closed" is made with today's date in the closed days (open every day all day), in a zone
where it is now about noon (tests.integration.hours_support): the next opening is tomorrow at
00:00 and stays so for the whole test whatever the hour it runs, across midnight too; clearing
the closed days opens it.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import asyncpg

from conversation.handoff.texts import HANDOFF_ACK_DEFAULT
from core.channel_kind import ChannelKind
from hours.cache import BusinessHoursCache
from hours.change import HoursChange, apply_change, check_change
from hours.texts import after_hours_ack, away_message
from jobs.context import JobContext
from jobs.handoff_tick import handoff_tick
from jobs.queue import open_queue
from tests.integration.hours_support import closed_today, noon_zone
from tests.integration.mode_support import AGENT_REPLY, CountingModel, HandingOffModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeWaha
from tests.whatsapp_payloads import waha_event
from worker.resources import Resources
from worker.settings import Settings

CHAT = "5511912345678@c.us"
TOMORROW = "amanhã às 00:00"
MODE = "select mode, mode_cause from conversations"
CONTEXT = "select count(*) from messages where direction = 'inbound' and context_at is not null"


async def _hours(db: asyncpg.Connection, org: uuid.UUID, **change: str) -> None:
    async with db.transaction():
        await apply_change(db, org, check_change(HoursChange(**change)), "test")


async def _closed_today(
    db: asyncpg.Connection, org: uuid.UUID, after_hours: str, now: datetime | None = None
) -> None:
    zone, today = closed_today(now or datetime.now(UTC))
    await _hours(
        db,
        org,
        schedule="dom-sab 00:00-24:00",
        timezone=zone,
        closed_dates=today,
        after_hours=after_hours,
    )


async def _say(settings: Settings, n: int, text: str) -> None:
    event = waha_event("loja", f"false_{CHAT}_M{n}", text, sender=CHAT, timestamp=int(time.time()))
    async with running_webhook(settings) as hook:
        assert (await hook.post_waha(event)).body["enqueued"] == 1


async def _org(db: asyncpg.Connection) -> uuid.UUID:
    org = await create_org(db, "Loja")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    return org


def _texts(fake_waha: FakeWaha) -> list[str]:
    return [text for _, _, text in fake_waha.delivered]


async def test_a_handoff_after_hours_says_when_a_person_will_answer(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha, resources: Resources
) -> None:
    org = await _org(db)
    await _closed_today(db, org, "answer")
    await _say(whatsapp_settings, 1, "quero um desconto")
    await run_burst(whatsapp_settings, model=HandingOffModel())
    # The model's own "já já" acknowledgement is replaced by the one with the opening.
    assert _texts(fake_waha) == [after_hours_ack(TOMORROW)]
    assert tuple(await db.fetchrow(MODE)) == ("waiting", "tool")
    # Nor does a "still calling someone" notice follow it overnight.
    await db.execute("update conversations set mode_since = now() - interval '16 minutes'")
    redis = await open_queue(whatsapp_settings.redis_url, whatsapp_settings.queue_name)
    try:
        ctx: JobContext = {
            "pool": resources.pool,
            "redis": redis,
            "handoff_idle_s": 0,
            "handoff_wait_s": 900,
        }
        assert (await handoff_tick(ctx))["noticed"] == 0
    finally:
        await redis.aclose()


async def test_a_customer_asking_for_a_person_after_hours_and_in_hours(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org = await _org(db)
    await _closed_today(db, org, "answer")
    model = CountingModel()
    await _say(whatsapp_settings, 1, "quero falar com um atendente")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha) == [after_hours_ack(TOMORROW)] and model.requests == []
    assert tuple(await db.fetchrow(MODE)) == ("waiting", "customer")

    # Open again (no closed day): the agent's usual acknowledgement.
    await db.execute("update conversations set mode = 'agent'")
    await _hours(db, org, closed_dates="")
    await _say(whatsapp_settings, 2, "quero falar com um atendente")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha)[1:] == [HANDOFF_ACK_DEFAULT]


async def test_after_hours_answering_goes_on_as_always(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org = await _org(db)
    await _closed_today(db, org, "answer")
    model = CountingModel()
    await _say(whatsapp_settings, 1, "vocês têm pão de queijo?")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha) == [AGENT_REPLY] and len(model.requests) == 1


async def test_away_sends_one_message_per_closed_period_then_the_agent_answers_when_open(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org = await _org(db)
    await _closed_today(db, org, "away")
    model = CountingModel()
    await _say(whatsapp_settings, 1, "oi, vocês entregam hoje?")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha) == [away_message(TOMORROW)] and model.requests == []
    assert await db.fetchval("select count(*) from outbox where status = 'sent'") == 1

    # The same closed period: nothing more is sent; the messages stay, as context.
    await _say(whatsapp_settings, 2, "alô?")
    await _say(whatsapp_settings, 3, "responde por favor")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha) == [away_message(TOMORROW)] and model.requests == []
    assert await db.fetchval(CONTEXT) == 2
    assert await db.fetchval("select lease_token from conversations") is None  # let go

    # While a person holds it, the away message is not the agent's to send either.
    await db.execute(
        "update conversations set mode = 'human', held_by = 'sk_x', away_period = null"
    )
    await _say(whatsapp_settings, 4, "oi de novo")
    await run_burst(whatsapp_settings, model=model)
    assert len(fake_waha.delivered) == 1
    await db.execute("update messages set answered_by = id where direction = 'inbound'")
    await db.execute("update conversations set mode = 'agent', held_by = null")

    # Open: the agent answers, with the closed period's messages in its history.
    await _hours(db, org, closed_dates="")
    await _say(whatsapp_settings, 5, "e agora, entregam?")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_waha)[1:] == [AGENT_REPLY]
    [request] = model.requests
    history = [m.content for m in request.messages]
    assert {"alô?", "responde por favor"} <= set(history)
    assert history[-1] == "e agora, entregam?"


async def test_a_worker_reads_an_orgs_hours_at_most_once_per_ttl(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja")
    clock = [0.0]
    cache = BusinessHoursCache(ttl_s=30.0, monotonic=lambda: clock[0])
    assert await cache.get(resources.pool, org) is None  # none set: always open
    now = datetime.now(UTC)
    await _closed_today(db, org, "away", now)
    clock[0] = 29.0
    assert await cache.get(resources.pool, org) is None  # still the copy read at 0 s
    clock[0] = 30.0
    hours = await cache.get(resources.pool, org)
    assert hours is not None and hours.zone.key == noon_zone(now)
    closed = await cache.closed_now(resources.pool, org, now)
    assert closed is not None and closed.away and closed.when == TOMORROW
