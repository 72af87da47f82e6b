"""A person in the conversation through the API, end to end: a Cloud API webhook, real burst
workers and a fake Graph API. The agent answers; a takeover silences it; a person's reply
reaches the customer (author person); a release gives it back; the refusals."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import asyncpg

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.mode_support import AGENT_REPLY, CountingModel, SlowModel
from tests.integration.support import create_org, publish, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from turn.model_input import CONTACT_NAME_LINE
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"


async def _customer_says(settings: Settings, text: str, *, age_s: int = 0) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=CUSTOMER, timestamp=int(time.time()) - age_s
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


async def _setup(db: asyncpg.Connection) -> tuple[uuid.UUID, str, str, str]:
    org = await create_org(db, "Loja Atendimento")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    editor = await create_key(db, org, Role.EDITOR)
    other = await create_key(db, org, Role.EDITOR)
    admin = await create_key(db, org, Role.ADMIN)
    return org, editor, other, admin


async def _conversation(api: ApiClient, key: str) -> dict[str, Any]:
    listed = await api.get("/v1/conversations", key)
    assert listed.status == 200, listed.body
    [item] = listed.body["items"]
    return dict(item)


def _texts(graph: FakeGraphApi) -> list[str]:
    return [text for _, _, text in graph.delivered]


async def test_a_person_takes_over_replies_and_gives_the_conversation_back(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor, other, admin = await _setup(db)
    model = CountingModel()
    await _customer_says(whatsapp_settings, "Oi, qual o prazo?")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_graph) == [AGENT_REPLY]
    async with running_api(whatsapp_settings, resources.store) as api:
        item = await _conversation(api, editor)
        assert (item["mode"], item["held_by"], item["unanswered"]) == ("agent", None, 0)
        assert item["last_message"]["author"] == "agent"
        path = f"/v1/conversations/{item['id']}"

        taken = await api.call("POST", f"{path}/takeover", editor, json_body={})
        assert taken.status == 200, taken.body
        assert (taken.body["mode"], taken.body["held_by"]) == ("human", editor[:12])
        held_by = taken.body["held_by"]

        await _customer_says(whatsapp_settings, "Alguém aí?")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph) == [AGENT_REPLY] and len(model.requests) == 1  # silent
        shown = await api.get(path, editor)
        assert shown.body["unanswered"] == 1 and shown.body["last_message"]["author"] == "customer"
        assert (await api.get("/v1/conversations?mode=human", editor)).body["items"]
        assert (await api.get("/v1/conversations?mode=agent", editor)).body["items"] == []

        # Another person may not take it; an admin may, with force.
        refused = await api.call("POST", f"{path}/takeover", other, json_body={})
        assert (refused.status, refused.code) == (409, "held_by_other")
        refused = await api.call("POST", f"{path}/takeover", other, json_body={"force": True})
        assert (refused.status, refused.code) == (409, "held_by_other")
        replied = await api.call("POST", f"{path}/messages", other, json_body={"text": "oi"})
        assert (replied.status, replied.code) == (409, "held_by_other")
        # Nor release it to take it next, around the admin-only force.
        refused = await api.call("POST", f"{path}/release", other, json_body={})
        assert (refused.status, refused.code) == (409, "held_by_other")
        assert (await api.get(path, editor)).body["held_by"] == held_by

        for text in ("", "   ", "x" * 4097):
            bad = await api.call("POST", f"{path}/messages", editor, json_body={"text": text})
            assert (bad.status, bad.code) == (422, "reply_text_invalid"), text

        sent = await api.call(
            "POST", f"{path}/messages", editor, json_body={"text": "  Oi! Sou a Ana.  "}
        )
        assert sent.status == 202, sent.body
        assert (sent.body["author"], sent.body["body"]) == ("person", "Oi! Sou a Ana.")
        assert sent.body["author_key_prefix"] == held_by
        await run_burst(whatsapp_settings, model=model)  # the job enqueued at once
        assert _texts(fake_graph) == [AGENT_REPLY, "Oi! Sou a Ana."]
        scraped = (await api.get("/metrics")).body
        assert "skillet_handoff_first_reply_seconds_count 1.0" in scraped
        assert len(model.requests) == 1
        shown = await api.get(path, editor)
        assert shown.body["unanswered"] == 0  # the person answered it

        messages = (await api.get(f"{path}/messages", editor)).body["items"]
        outbound = [m for m in messages if m["direction"] == "outbound"]
        assert [m["author"] for m in outbound] == ["agent", "person"]
        assert outbound[0]["skills"] == [] and outbound[1]["author_key_prefix"] == held_by
        assert outbound[1]["delivery"]["status"] == "sent"

        forced = await api.call("POST", f"{path}/takeover", admin, json_body={"force": True})
        assert forced.status == 200 and forced.body["held_by"] == admin[:12]
        released = await api.call("POST", f"{path}/release", admin, json_body={})
        assert released.status == 200 and released.body["mode"] == "agent"

        await _customer_says(whatsapp_settings, "E o frete?")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph)[-1] == AGENT_REPLY and len(model.requests) == 2
        # The agent read the person's message in its history, marked.
        history = [m.content for m in model.requests[-1].messages]
        assert "[atendente] Oi! Sou a Ana." in history

    actions = [(r["action"], r["outcome"]) for r in await audit_rows(db, org)]
    assert ("conversation.takeover", "ok") in actions
    assert ("conversation.takeover", "refused") in actions
    assert ("conversation.reply", "ok") in actions
    assert ("conversation.release", "ok") in actions


async def test_release_answers_what_no_person_answered_only_when_asked(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    _, editor, _, _ = await _setup(db)
    model = CountingModel()
    await _customer_says(whatsapp_settings, "Oi")
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        path = f"/v1/conversations/{(await _conversation(api, editor))['id']}"
        await api.call("POST", f"{path}/takeover", editor, json_body={})
        await _customer_says(whatsapp_settings, "primeira pergunta")
        await run_burst(whatsapp_settings, model=model)
        released = await api.call("POST", f"{path}/release", editor, json_body={})
        assert released.body["unanswered"] == 0  # kept as context only
        await run_burst(whatsapp_settings, model=model)
        assert len(model.requests) == 1

        await api.call("POST", f"{path}/takeover", editor, json_body={})
        await _customer_says(whatsapp_settings, "segunda pergunta")
        await run_burst(whatsapp_settings, model=model)
        released = await api.call(
            "POST", f"{path}/release", editor, json_body={"answer_pending": True}
        )
        assert released.body["unanswered"] == 1
        await run_burst(whatsapp_settings, model=model)  # the release enqueued a job
        assert len(model.requests) == 2 and _texts(fake_graph)[-1] == AGENT_REPLY
        asked = [m.content for m in model.requests[-1].messages]
        # The customer's profile name ("Cliente", from the delivery) opens their burst.
        named = CONTACT_NAME_LINE.format(name="Cliente")
        assert asked[-1] == f"{named}\nsegunda pergunta" and "primeira pergunta" in asked

        # A reply in a conversation the agent has takes it over.
        sent = await api.call("POST", f"{path}/messages", editor, json_body={"text": "Oi!"})
        assert sent.status == 202
        shown = (await api.get(path, editor)).body
        assert (shown["mode"], shown["held_by"], shown["mode_cause"]) == (
            "human",
            editor[:12],
            "console",
        )


async def test_a_person_cannot_reply_outside_the_24_hour_window(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    _, editor, _, _ = await _setup(db)
    await _customer_says(whatsapp_settings, "Oi", age_s=25 * 3600)
    async with running_api(whatsapp_settings, resources.store) as api:
        path = f"/v1/conversations/{(await _conversation(api, editor))['id']}"
        late = await api.call("POST", f"{path}/messages", editor, json_body={"text": "oi"})
        assert (late.status, late.code) == (409, "outside_service_window")
        viewer = await create_key(
            db, (await db.fetchval("select id from organizations")), Role.VIEWER
        )
        forbidden = await api.call("POST", f"{path}/takeover", viewer, json_body={})
        assert forbidden.status == 403
        missing = await api.call(
            "POST", f"/v1/conversations/{uuid.uuid4()}/takeover", editor, json_body={}
        )
        assert (missing.status, missing.code) == (404, "conversation_not_found")
    assert await db.fetchval("select count(*) from outbox") == 0


async def test_the_agents_handoff_texts_are_set_through_the_api(
    whatsapp_settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, _, _, admin = await _setup(db)
    agent_id = await db.fetchval("select id from agents where organization_id = $1", org)
    async with running_api(whatsapp_settings, resources.store) as api:
        path = f"/v1/agents/{agent_id}"
        body = {"handoff_ack": "Chamando a equipe!", "handoff_wait_notice": "Só um instante."}
        changed = await api.call("PATCH", path, admin, json_body=body)
        assert changed.status == 200, changed.body
        assert (changed.body["handoff_ack"], changed.body["handoff_wait_notice"]) == (
            "Chamando a equipe!",
            "Só um instante.",
        )
        bad = await api.call("PATCH", path, admin, json_body={"handoff_ack": "x" * 1001})
        assert (bad.status, bad.code) == (422, "invalid_handoff_text")
        listed = await api.get("/v1/agents", admin)
        assert listed.body["items"][0]["handoff_ack"] == "Chamando a equipe!"


async def test_a_takeover_through_the_api_while_the_model_thinks_stops_the_agents_reply(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    _, editor, _, _ = await _setup(db)
    model = SlowModel()
    await _customer_says(whatsapp_settings, "Quanto custa?")
    async with running_api(whatsapp_settings, resources.store) as api:
        worker = asyncio.create_task(run_burst(whatsapp_settings, model=model))
        await asyncio.wait_for(model.thinking.wait(), 10)
        path = f"/v1/conversations/{(await _conversation(api, editor))['id']}"
        taken = await api.call("POST", f"{path}/takeover", editor, json_body={})
        assert taken.status == 200 and taken.body["unanswered"] == 1
        scraped = await api.get("/metrics")
        assert 'skillet_handoffs_total{cause="console"} 1.0' in scraped.body
        model.answer.set()
        await asyncio.wait_for(worker, 30)
        assert fake_graph.delivered == []  # the agent's reply was never committed nor sent
        shown = await api.get(path, editor)
        assert (shown.body["mode"], shown.body["unanswered"]) == ("human", 1)
        messages = (await api.get(f"{path}/messages", editor)).body["items"]
        assert [m["author"] for m in messages] == ["customer"]
    assert await db.fetchval("select count(*) from outbox") == 0


async def test_a_takeover_and_release_while_the_model_thinks_still_drops_the_agents_reply(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    # Back with the agent before the model answers: the reply was thought before a person
    # stepped in, so it must not go out (the person chose to keep the message as context).
    _, editor, _, _ = await _setup(db)
    model = SlowModel()
    await _customer_says(whatsapp_settings, "Quanto custa?")
    async with running_api(whatsapp_settings, resources.store) as api:
        worker = asyncio.create_task(run_burst(whatsapp_settings, model=model))
        await asyncio.wait_for(model.thinking.wait(), 10)
        path = f"/v1/conversations/{(await _conversation(api, editor))['id']}"
        assert (await api.call("POST", f"{path}/takeover", editor, json_body={})).status == 200
        released = await api.call("POST", f"{path}/release", editor, json_body={})
        assert released.status == 200 and released.body["mode"] == "agent"
        model.answer.set()
        await asyncio.wait_for(worker, 30)
        assert fake_graph.delivered == []
        messages = (await api.get(f"{path}/messages", editor)).body["items"]
        assert [m["author"] for m in messages] == ["customer"]
    assert await db.fetchval("select count(*) from outbox") == 0


async def test_agent_replies_list_their_skills_and_the_waiting_queue_is_oldest_first(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor, _, _ = await _setup(db)
    version = await publish(db, resources.store, org, "frete", keywords=["frete"])
    await _customer_says(whatsapp_settings, "Qual o frete?")
    await run_burst(whatsapp_settings, model=CountingModel())
    async with running_api(whatsapp_settings, resources.store) as api:
        conversation = await _conversation(api, editor)
        path = f"/v1/conversations/{conversation['id']}/messages"
        [reply] = [
            m for m in (await api.get(path, editor)).body["items"] if m["author"] != "customer"
        ]
        assert reply["skills"] == [{"name": "frete", "version_id": str(version)}]

        # Three conversations waiting since different times: the longest wait comes first.
        for n in range(3):
            await db.execute(
                "insert into conversations (organization_id, channel, contact_id, mode, "
                "mode_since, mode_cause) values ($1, 'whatsapp', $2, 'waiting', "
                "now() - make_interval(mins => $3), 'tool')",
                org,
                f"55110000000{n}",
                10 * (n + 1),
            )
        pages = await api.walk("/v1/conversations?mode=waiting", editor, 2)
        contacts = [item["contact_id"] for page in pages for item in page]
        assert contacts == ["551100000002", "551100000001", "551100000000"]
        bad = await api.get("/v1/conversations?mode=robot", editor)
        assert (bad.status, bad.code) == (400, "invalid_mode")
