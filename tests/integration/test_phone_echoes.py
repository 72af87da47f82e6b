"""The owner's phone, end to end: signed echoes (WAHA fromMe on message.any, Cloud API
smb_message_echoes) -> the webhook stores each pending -> a real worker settles it after the
grace: skillet's own reply changes nothing, the owner's message takes the conversation."""

from __future__ import annotations

import time
import uuid
from typing import Any

import asyncpg
from arq.constants import job_key_prefix, result_key_prefix

from conversation.handoff.texts import PHONE_MARK
from conversation.person_actions import Actor, release
from core.channel_kind import ChannelKind
from jobs.conversation_sweep import conversation_sweep
from jobs.payloads import echo_job_id
from jobs.queue import open_queue
from tests.integration.mode_support import CountingModel
from tests.integration.ops_support import eventually, running_worker
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import TEST_CONFIG, connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value, waha_event
from worker.resources import Resources
from worker.settings import Settings

CUSTOMER = "5511912345678"
GRACE_S = 0.5
# Long enough that a job picked up by a running worker is surely inside it (a loaded CI box
# stalls for seconds, not this long); the test waits it out once.
IN_FLIGHT_GRACE_S = 5.0
ECHO_CONFIG = TEST_CONFIG


def _settings(whatsapp_settings: Settings, grace_s: float = GRACE_S) -> Settings:
    return whatsapp_settings.model_copy(update={"echo_grace_s": grace_s})


def _customer(message_id: str, text: str) -> dict[str, Any]:
    return waha_event(
        "loja", message_id, text, sender=f"{CUSTOMER}@c.us", timestamp=int(time.time())
    )


def _own(message_id: str, text: str, *, chat: str = f"{CUSTOMER}@c.us") -> dict[str, Any]:
    """What WAHA posts on `message.any` for a message the session's number sent (NOWEB: the
    chat in `from`, the session's own number in `to`)."""
    return waha_event(
        "loja",
        message_id,
        text,
        sender=chat,
        from_me=True,
        event="message.any",
        timestamp=int(time.time()),
    )


def _cloud_echo(message_id: str, text: str) -> dict[str, Any]:
    value = cloud_value("106540352242922")
    value["message_echoes"] = [
        {
            "from": "551140000000",
            "to": CUSTOMER,
            "id": message_id,
            "timestamp": str(int(time.time())),
            "type": "text",
            "text": {"body": text},
        }
    ]
    document = cloud_delivery(value)
    document["entry"][0]["changes"][0]["field"] = "smb_message_echoes"
    return document


async def _post_waha(settings: Settings, *events: dict[str, Any]) -> list[dict[str, Any]]:
    async with running_webhook(settings, ECHO_CONFIG) as hook:
        answers = [await hook.post_waha(e) for e in events]
    assert all(a.status == 200 for a in answers)
    return [a.body for a in answers]


async def _conversation(db: asyncpg.Connection, org: uuid.UUID) -> asyncpg.Record:
    row = await db.fetchrow(
        "select id, mode, held_by, mode_cause, handoff_at, person_replied_at from conversations "
        "where organization_id = $1",
        org,
    )
    assert row is not None
    return row


async def _thread(db: asyncpg.Connection, org: uuid.UUID) -> list[tuple[str, str | None, str]]:
    rows = await db.fetch(
        "select direction, author, body from messages where organization_id = $1 "
        "order by created_at, id",
        org,
    )
    return [(r["direction"], r["author"], r["body"]) for r in rows]


async def _echo_states(db: asyncpg.Connection, org: uuid.UUID) -> list[str]:
    rows = await db.fetch(
        "select status from message_echoes where organization_id = $1 order by received_at", org
    )
    return [r["status"] for r in rows]


async def _answered_customer_first(
    settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> uuid.UUID:
    org = await create_org(db, "Loja do celular")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    await _post_waha(settings, _customer("false_c1", "Oi, vocês têm bolo de cenoura?"))
    await run_burst(settings)
    assert len(fake_waha.delivered) == 1
    return org


async def test_the_owner_writing_from_the_phone_takes_the_conversation_from_the_agent(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    settings = _settings(whatsapp_settings)
    org = await _answered_customer_first(settings, db, fake_waha)
    await _post_waha(settings, _customer("false_c2", "E de chocolate?"))
    # The owner answers from the phone before the worker gets to it.
    [echo, redelivered] = await _post_waha(
        settings,
        _own("true_5511912345678@c.us_OWNER1", "Oi! Aqui é a Ana, dona da loja. Temos sim."),
        _own("true_5511912345678@c.us_OWNER1", "Oi! Aqui é a Ana, dona da loja. Temos sim."),
    )
    assert (echo["echoes"], echo["enqueued"]) == (1, 0)
    assert redelivered.get("echoes", 0) + redelivered["duplicates"] == 1
    worker = await run_burst(settings)

    conversation = await _conversation(db, org)
    assert (conversation["mode"], conversation["held_by"], conversation["mode_cause"]) == (
        "human",
        "phone",
        "phone",
    )
    assert conversation["person_replied_at"] is not None
    thread = await _thread(db, org)
    phone = [t for t in thread if t[1] == "phone"]
    assert phone == [("outbound", "phone", "Oi! Aqui é a Ana, dona da loja. Temos sim.")]
    # Not sent again: the phone sent it. The customer's second message is the phone's to answer.
    assert len(fake_waha.delivered) == 1
    unanswered = await db.fetchval(
        "select count(*) from messages where organization_id = $1 and direction = 'inbound' "
        "and answered_by is null",
        org,
    )
    assert unanswered == 0
    assert await _echo_states(db, org) == ["phone"]
    handoffs = worker.ctx["metrics"].handoffs.labels(cause="phone")._value.get()
    assert handoffs == 1

    # The customer's next message is stored, and the agent stays silent.
    await _post_waha(settings, _customer("false_c3", "Que horas vocês fecham?"))
    await run_burst(settings)
    assert len(fake_waha.delivered) == 1
    assert (await _thread(db, org))[-1] == ("inbound", None, "Que horas vocês fecham?")

    # A job run twice changes the mode once.
    await db.execute(
        "update conversations set mode = 'agent', held_by = null where organization_id = $1",
        org,
    )
    settled = await db.fetchrow(
        "select outcome, decided from skillet_settle_echo($1, '', "
        "(select id from message_echoes where organization_id = $1), 0)",
        org,
    )
    assert (settled["outcome"], settled["decided"]) == ("phone", False)
    assert (await _conversation(db, org))["mode"] == "agent"


async def test_the_echo_of_skillets_own_waha_reply_changes_nothing(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    settings = _settings(whatsapp_settings)
    org = await _answered_customer_first(settings, db, fake_waha)
    [(_, chat_id, reply)] = fake_waha.delivered
    ours = f"true_{chat_id}_1"  # the id the fake's sendText answered with
    assert await db.fetchval(
        "select count(*) from outbox_receipts where provider_message_id = $1", ours
    )
    [answer] = await _post_waha(settings, _own(ours, reply))
    assert answer["echoes"] == 1
    await run_burst(settings)
    assert await _echo_states(db, org) == ["ours"]
    assert (await _conversation(db, org))["mode"] == "agent"
    assert [t for t in await _thread(db, org) if t[1] == "phone"] == []

    await _post_waha(settings, _customer("false_c2", "E de chocolate?"))
    await run_burst(settings)
    assert len(fake_waha.delivered) == 2  # the agent still answers


async def test_while_a_reply_is_in_flight_its_echo_is_ours_and_another_waits_out_the_grace(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    org = await _answered_customer_first(_settings(whatsapp_settings), db, fake_waha)
    [(_, chat_id, reply)] = fake_waha.delivered
    ours = f"true_{chat_id}_1"
    # As if the echo beat the send's answer: the send is still in flight (claimed, not marked
    # sent) and its provider id not stored yet when the echoes arrive.
    receipt = await db.fetchrow(
        "delete from outbox_receipts where provider_message_id = $1 returning *", ours
    )
    assert receipt is not None
    await db.execute(
        "update outbox set status = 'pending', sent_at = null where id = $1", receipt["outbox_id"]
    )
    settings = _settings(whatsapp_settings, grace_s=IN_FLIGHT_GRACE_S)
    # Started before the echoes arrive, so each job runs at once, well inside the grace.
    async with running_worker(settings) as worker:
        async with running_webhook(whatsapp_settings, TEST_CONFIG) as hook:
            assert (await hook.post_waha(_own(ours, reply))).body["echoes"] == 1
            owner = _own(f"true_{chat_id}_OWNER9", "Deixa comigo, já te respondo.")
            assert (await hook.post_waha(owner)).body["echoes"] == 1

        # Both jobs have run once: the reply's own text is ours at once; the other text may
        # still be ours (its id on the way), so its job was put back to wait out the grace.
        async def both_ran_once() -> bool:
            return worker.jobs_complete >= 1 and worker.jobs_retried >= 1

        await eventually(both_ran_once, timeout_s=30)
        assert await _echo_states(db, org) == ["ours", "pending"]
        await db.execute(
            "update outbox set status = 'sent', sent_at = now() where id = $1",
            receipt["outbox_id"],
        )

        # Past the grace, the agent's reply in flight is not the owner's: the phone's.
        async def settled() -> bool:
            return await _echo_states(db, org) == ["ours", "phone"]

        await eventually(settled, timeout_s=IN_FLIGHT_GRACE_S + 30)
    assert (await _conversation(db, org))["mode"] == "human"


async def test_cloud_api_echoes_ours_change_nothing_and_the_owners_take_over(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_graph: FakeGraphApi
) -> None:
    settings = _settings(whatsapp_settings)
    org = await create_org(db, "Loja na nuvem")
    await connect_number(db, org, ChannelKind.CLOUD_API, "106540352242922")
    message = cloud_text("wamid.in.1", "Oi!", sender=CUSTOMER, timestamp=int(time.time()))
    async with running_webhook(settings, ECHO_CONFIG) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value("106540352242922", [message])))
    await run_burst(settings)
    [(_, _, reply)] = fake_graph.delivered
    async with running_webhook(settings, ECHO_CONFIG) as hook:
        mine = await hook.post_cloud(_cloud_echo("wamid.out.1", reply))  # the fake's wamid
    assert mine.body["echoes"] == 1
    await run_burst(settings)
    assert await _echo_states(db, org) == ["ours"]
    assert (await _conversation(db, org))["mode"] == "agent"

    async with running_webhook(settings, ECHO_CONFIG) as hook:
        owner = await hook.post_cloud(_cloud_echo("wamid.app.1", "Pode deixar, eu resolvo."))
    assert owner.body["echoes"] == 1
    await run_burst(settings)
    conversation = await _conversation(db, org)
    assert (conversation["mode"], conversation["held_by"]) == ("human", "phone")
    assert (await _thread(db, org))[-1] == ("outbound", "phone", "Pode deixar, eu resolvo.")
    assert len(fake_graph.delivered) == 1


async def test_echoes_in_groups_broadcasts_and_channels_are_ignored(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    settings = _settings(whatsapp_settings)
    org = await create_org(db, "Loja dos grupos")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    answers = await _post_waha(
        settings,
        _own("true_g1", "oi grupo", chat="120363025246125888@g.us"),
        _own("true_s1", "novidade", chat="status@broadcast"),
        _own("true_n1", "canal", chat="120363025246125999@newsletter"),
    )
    assert [(a.get("echoes", 0), a["skipped"]) for a in answers] == [(0, 1)] * 3
    assert await _echo_states(db, org) == []
    assert (
        await db.fetchval("select count(*) from conversations where organization_id = $1", org) == 0
    )


async def test_after_a_release_the_agent_reads_the_phones_message_marked(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha
) -> None:
    settings = _settings(whatsapp_settings)
    org = await _answered_customer_first(settings, db, fake_waha)
    await _post_waha(settings, _own("true_5511912345678@c.us_OWNER2", "Seu pedido sai amanhã."))
    await run_burst(settings)
    conversation = await _conversation(db, org)
    assert conversation["mode"] == "human"
    await release(db, Actor(org, "cli", may_force=True), conversation["id"], answer_pending=False)

    await _post_waha(settings, _customer("false_c2", "Obrigado! E o troco?"))
    model = CountingModel()
    await run_burst(settings, model=model)
    assert len(fake_waha.delivered) == 2  # the agent answers again
    [request] = model.requests
    said = [m.content for m in request.messages if m.role == "assistant"]
    assert f"{PHONE_MARK} Seu pedido sai amanhã." in said


async def test_an_echo_whose_job_redis_lost_is_settled_by_the_sweep_once(
    whatsapp_settings: Settings, db: asyncpg.Connection, fake_waha: FakeWaha, resources: Resources
) -> None:
    settings = _settings(whatsapp_settings)
    org = await _answered_customer_first(settings, db, fake_waha)
    await _post_waha(settings, _own("true_5511912345678@c.us_OWNER3", "Deixa que eu respondo."))
    # Well past the grace and the sweep's margin, as if the sweep came a while later.
    await db.execute(
        "update message_echoes set received_at = now() - interval '10 minutes'"
        " where organization_id = $1",
        org,
    )
    redis = await open_queue(settings.redis_url, settings.queue_name)

    async def sweep() -> tuple[int, int]:
        context: Any = {
            "pool": resources.pool,
            "redis": redis,
            "sweep_after_s": 3600.0,
            "echo_grace_s": settings.echo_grace_s,
        }
        summary = await conversation_sweep(context)
        assert summary["status"] == "ok"
        return summary["echoes_pending"], summary["echoes_requeued"]

    try:
        # Its job is still queued: the sweep's enqueue under the same id is a no-op.
        assert await sweep() == (1, 0)
        # Redis lost its data (this test's queue only: others share the server).
        for job_id in await redis.zrange(settings.queue_name, 0, -1):
            await redis.delete(job_key_prefix + job_id.decode())
        await redis.delete(settings.queue_name)
        await run_burst(settings)
        assert await _echo_states(db, org) == ["pending"]
        assert (await _conversation(db, org))["mode"] == "agent"

        assert await sweep() == (1, 1)
        assert await sweep() == (1, 0)  # queued once, however many sweeps see it
        worker = await run_burst(settings)
        conversation = await _conversation(db, org)
        assert (conversation["mode"], conversation["held_by"], conversation["mode_cause"]) == (
            "human",
            "phone",
            "phone",
        )
        phone = [t for t in await _thread(db, org) if t[1] == "phone"]
        assert phone == [("outbound", "phone", "Deixa que eu respondo.")]
        assert await _echo_states(db, org) == ["phone"]
        assert worker.ctx["metrics"].handoffs.labels(cause="phone")._value.get() == 1
        assert len(fake_waha.delivered) == 1  # the phone sent it: not sent again

        # Settled: no sweep enqueues it again, even once its job's result is gone.
        await redis.delete(result_key_prefix + echo_job_id(org, "true_5511912345678@c.us_OWNER3"))
        assert await sweep() == (0, 0)
    finally:
        await redis.aclose()


async def test_a_recent_echo_is_left_to_its_own_job(
    whatsapp_settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    """Within the grace and the margin the webhook's job has the echo: the sweep waits."""
    settings = _settings(whatsapp_settings)
    org = await create_org(db, "Loja recente")
    await connect_number(db, org, ChannelKind.WAHA, "loja")
    await _post_waha(settings, _own("true_5511912345678@c.us_OWNER4", "Já volto."))
    redis = await open_queue(settings.redis_url, settings.queue_name)
    try:
        for job_id in await redis.zrange(settings.queue_name, 0, -1):
            await redis.delete(job_key_prefix + job_id.decode())
        await redis.delete(settings.queue_name)
        context: Any = {
            "pool": resources.pool,
            "redis": redis,
            "sweep_after_s": 3600.0,
            "echo_grace_s": settings.echo_grace_s,
        }
        summary = await conversation_sweep(context)
        assert (summary["echoes_pending"], summary["echoes_requeued"]) == (0, 0)
    finally:
        await redis.aclose()
    assert await _echo_states(db, org) == ["pending"]
