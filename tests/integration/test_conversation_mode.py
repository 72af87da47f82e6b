"""The conversation's mode in the turn: a takeover fences a running turn's reply, nothing is
answered while a person holds it or is asked for, the sweep leaves it, and a turn hands off
by the model's tool or the customer's request."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from typing import Any

import asyncpg

from conversation.handoff.texts import HANDOFF_ACK_DEFAULT, HANDOFF_WAIT_NOTICE_DEFAULT
from conversation.holder import ConversationWakeup, run_conversation
from jobs.context import JobContext
from jobs.conversation_sweep import LIST_WAITING
from jobs.handoff_tick import handoff_tick
from jobs.queue import open_queue
from tests.integration.mode_support import (
    AGENT_REPLY,
    HANDOFF_ACK,
    CountingModel,
    HandingOffModel,
    RecordingSender,
    SlowModel,
)
from tests.integration.support import create_org, enqueue, payload, run_burst
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511966660000"
OUTBOUND = "select body from messages where direction = 'outbound' order by created_at"
MODE = "select mode, held_by, mode_cause, mode_reason from conversations"
UNANSWERED = """
select count(*) from messages
where direction = 'inbound' and answered_by is null and context_at is null
"""

TAKE_OVER = """
update conversations set mode = 'human', held_by = $1, mode_since = now(),
    mode_cause = 'console', handoff_at = now()
"""


async def _say(settings: Settings, org: uuid.UUID, message_id: str, text: str = "oi") -> None:
    await enqueue(settings, payload(org, message_id, text, CONTACT))


async def test_a_takeover_while_the_model_thinks_keeps_the_agents_reply_from_the_customer(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    model, sender = SlowModel(), RecordingSender()
    await _say(settings, org, "m1", "qual o preço?")
    worker = asyncio.create_task(run_burst(settings, model=model, sender=sender))
    await asyncio.wait_for(model.thinking.wait(), 10)
    await db.execute(TAKE_OVER, "sk_abc")  # a person takes it while the model thinks
    model.answer.set()
    await asyncio.wait_for(worker, 20)
    assert sender.sent == []
    assert await db.fetch(OUTBOUND) == []
    assert await db.fetchval("select count(*) from outbox") == 0
    assert await db.fetchval(UNANSWERED) == 1  # unanswered by anyone, for the person
    assert await db.fetchval("select lease_token from conversations") is None  # let go


async def test_nothing_is_answered_or_swept_while_a_person_holds_it(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    model, sender = CountingModel(), RecordingSender()
    await _say(settings, org, "m1")
    await run_burst(settings, model=model, sender=sender)
    assert sender.sent == [AGENT_REPLY]
    await db.execute(TAKE_OVER, "sk_abc")
    await _say(settings, org, "m2", "e agora?")
    await run_burst(settings, model=model, sender=sender)
    assert sender.sent == [AGENT_REPLY] and len(model.requests) == 1
    assert await db.fetchval(UNANSWERED) == 1
    await db.execute("update messages set received_at = now() - interval '1 hour'")
    assert await resources.pool.fetch(LIST_WAITING, 0.0, 100) == []
    await db.execute("update conversations set mode = 'agent'")
    assert len(await resources.pool.fetch(LIST_WAITING, 0.0, 100)) == 1  # the agent's again


async def test_the_models_handoff_sends_its_reply_and_leaves_the_conversation_waiting(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    sender = RecordingSender()
    await _say(settings, org, "m1", "quero um desconto")
    worker = await run_burst(settings, model=HandingOffModel(), sender=sender)
    assert sender.sent == [HANDOFF_ACK]  # the acknowledgement is still sent
    metrics = worker.ctx["metrics"]
    assert metrics.handoffs.labels(cause="tool")._value.get() == 1
    assert tuple(await db.fetchrow(MODE)) == ("waiting", None, "tool", "quer negociar desconto")
    silent = CountingModel()
    await _say(settings, org, "m2", "alô?")
    await run_burst(settings, model=silent, sender=sender)
    assert sender.sent == [HANDOFF_ACK] and silent.requests == []
    assert await db.fetchval(UNANSWERED) == 1


async def test_a_customer_asking_for_a_person_gets_the_agents_acknowledgement_and_waits(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    model, sender = CountingModel(), RecordingSender()
    deps = dataclasses.replace(
        resources.turn_deps,
        models=_only(model),
        sender=sender,
        asks_for_person=lambda text: "atendente" in text,
    )
    await _say(settings, org, "m1", "quero falar com um atendente")
    conversation = await db.fetchval("select id from conversations")
    wakeup = ConversationWakeup(org, conversation)
    await run_conversation(deps, wakeup, job_id="j1")
    assert sender.sent == [HANDOFF_ACK_DEFAULT] and model.requests == []  # no model call
    assert tuple(await db.fetchrow(MODE))[:3] == ("waiting", None, "customer")
    await _say(settings, org, "m2", "oi?")
    await run_conversation(deps, wakeup, job_id="j2")
    assert sender.sent == [HANDOFF_ACK_DEFAULT] and model.requests == []
    # The agent's own acknowledgement, when it has one.
    await db.execute("update conversations set mode = 'agent'")
    await db.execute("update messages set context_at = now() where direction = 'inbound'")
    await db.execute(
        "insert into agents (organization_id, name, system_prompt, handoff_ack) "
        "values ($1, 'a', 'p', 'Um instante, chamando a equipe.')",
        org,
    )
    await _say(settings, org, "m3", "atendente por favor")
    await run_conversation(deps, wakeup, job_id="j3")
    assert sender.sent[-1] == "Um instante, chamando a equipe."


def _only(model: Any) -> Any:
    """A model registry whose every agent gets `model`."""

    class Only:
        def resolve(self, provider: str | None, name: str | None) -> Any:
            return model

    return Only()


async def _tick(resources: Resources, settings: Settings, idle_s: int, wait_s: int) -> Any:
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        ctx: JobContext = {
            "pool": resources.pool,
            "redis": redis,
            "handoff_idle_s": idle_s,
            "handoff_wait_s": wait_s,
        }
        return await handoff_tick(ctx)
    finally:
        await redis.aclose()


async def test_a_customer_left_waiting_gets_one_notice_and_stays_waiting(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    sender = RecordingSender()
    await _say(settings, org, "m1", "quero um desconto")
    await run_burst(settings, model=HandingOffModel(), sender=sender)
    assert (await _tick(resources, settings, 0, 900))["noticed"] == 0  # not yet overdue
    await db.execute("update conversations set mode_since = now() - interval '16 minutes'")
    assert (await _tick(resources, settings, 0, 900))["noticed"] == 1
    assert (await _tick(resources, settings, 0, 900))["noticed"] == 0  # once per handoff
    await run_burst(settings, model=CountingModel(), sender=sender)  # the job enqueued at once
    assert sender.sent == [HANDOFF_ACK, HANDOFF_WAIT_NOTICE_DEFAULT]
    assert await db.fetchval("select mode from conversations") == "waiting"
    assert await db.fetchval("select count(*) from outbox where status = 'sent'") == 2
    assert (await _tick(resources, settings, 0, 0))["modes"] == {"waiting": 1}


async def test_a_conversation_a_person_left_idle_goes_back_to_the_agent_answering_nothing(
    db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    model, sender = CountingModel(), RecordingSender()
    await _say(settings, org, "m1")
    await run_burst(settings, model=model, sender=sender)
    await db.execute(TAKE_OVER, "sk_abc")
    await _say(settings, org, "m2", "ainda aí?")
    await run_burst(settings, model=model, sender=sender)
    assert (await _tick(resources, settings, 14_400, 0))["returned"] == 0
    await db.execute("update conversations set mode_since = now() - interval '5 hours'")
    assert (await _tick(resources, settings, 0, 900))["returned"] == 0  # 0: never
    assert (await _tick(resources, settings, 14_400, 0))["returned"] == 1
    assert tuple(await db.fetchrow(MODE))[:2] == ("agent", None)
    await run_burst(settings, model=model, sender=sender)
    assert len(model.requests) == 1 and await db.fetchval(UNANSWERED) == 0  # m2: context
    await _say(settings, org, "m3", "oi de novo")
    await run_burst(settings, model=model, sender=sender)
    assert len(model.requests) == 2 and sender.sent == [AGENT_REPLY, AGENT_REPLY]
    assert "ainda aí?" in [m.content for m in model.requests[-1].messages]
