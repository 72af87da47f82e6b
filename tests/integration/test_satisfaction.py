"""Satisfaction end to end: a Cloud API webhook, real burst workers, the API and a fake Graph
API. Off by default; on, a person who answered and releases the conversation sends the
customer one question with three buttons (once per org-day, only inside the 24-hour window,
never to an opted-out customer); the tap is stored with whoever held it and not answered; the
text right after it is its comment and is answered; GET /v1/satisfaction lists it and the
score per person and per week. WAHA: the question as a numbered text, "1" read as the tap."""

from __future__ import annotations

import time
import uuid
from typing import Any

import asyncpg

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value, waha_event
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242933"
SESSION = "loja-satisfacao"
CUSTOMER = "5511912345699"
BUTTONS = [
    {"type": "reply", "reply": {"id": "satisfacao:otimo", "title": "😀 Ótimo"}},
    {"type": "reply", "reply": {"id": "satisfacao:ok", "title": "😐 Ok"}},
    {"type": "reply", "reply": {"id": "satisfacao:ruim", "title": "🙁 Ruim"}},
]


async def _cloud(settings: Settings, message: dict[str, Any]) -> None:
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


def _text(text: str, *, age_s: int = 0) -> dict[str, Any]:
    wamid = f"wamid.{uuid.uuid4().hex}"
    return cloud_text(wamid, text, sender=CUSTOMER, timestamp=int(time.time()) - age_s)


def _tap(choice_id: str, title: str) -> dict[str, Any]:
    return {
        "from": CUSTOMER,
        "id": f"wamid.{uuid.uuid4().hex}",
        "timestamp": str(int(time.time())),
        "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": choice_id, "title": title}},
    }


async def _org(db: asyncpg.Connection, kind: ChannelKind) -> tuple[uuid.UUID, str, str]:
    org = await create_org(db, "Loja Satisfação")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, kind, NUMBER if kind is ChannelKind.CLOUD_API else SESSION)
    return org, await create_key(db, org, Role.EDITOR), await create_key(db, org, Role.ADMIN)


async def _answer_and_release(api: ApiClient, editor: str) -> dict[str, Any]:
    [item] = (await api.get("/v1/conversations", editor)).body["items"]
    path = f"/v1/conversations/{item['id']}"
    assert (await api.call("POST", f"{path}/takeover", editor, json_body={})).status == 200
    replied = await api.call("POST", f"{path}/messages", editor, json_body={"text": "Resolvido!"})
    assert replied.status == 202, replied.body
    released = await api.call("POST", f"{path}/release", editor, json_body={})
    assert released.status == 200, released.body
    return dict(item)


def _interactive(graph: FakeGraphApi) -> list[Any]:
    return [body for kind, body in graph.sends if kind == "interactive"]


async def test_off_by_default_then_asked_once_the_tap_stored_and_the_comment_answered(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor, admin = await _org(db, ChannelKind.CLOUD_API)
    model = CountingModel()
    await _cloud(whatsapp_settings, _text("Oi, meu pedido não chegou"))
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        settings = (await api.get("/v1/settings", admin)).body
        assert settings["satisfaction"] == "off"
        assert settings["satisfaction_buttons"] == ["😀 Ótimo", "😐 Ok", "🙁 Ruim"]
        await _answer_and_release(api, editor)  # off: nothing asked
    await run_burst(whatsapp_settings, model=model)
    assert _interactive(fake_graph) == []

    async with running_api(whatsapp_settings, resources.store) as api:
        bad = await api.call(
            "PATCH", "/v1/settings", admin, json_body={"satisfaction_buttons": ["a", "b"]}
        )
        assert (bad.status, bad.body["error"]) == (422, "satisfaction_buttons_invalid")
        long = ["x" * 21, "b", "c"]
        bad = await api.call(
            "PATCH", "/v1/settings", admin, json_body={"satisfaction_buttons": long}
        )
        assert bad.status == 422
        turned = await api.call("PATCH", "/v1/settings", admin, json_body={"satisfaction": "on"})
        assert turned.status == 200 and turned.body["satisfaction"] == "on", turned.body
        assert turned.body["previous"] == {"satisfaction": "off"}
        item = await _answer_and_release(api, editor)
        await _answer_and_release(api, editor)  # the same org-day: not asked again
    await run_burst(whatsapp_settings, model=model)
    [question] = _interactive(fake_graph)
    assert question == {
        "type": "button",
        "body": {"text": "Como foi o seu atendimento? Toque numa opção."},
        "action": {"buttons": BUTTONS},
    }

    calls = len(model.requests)
    await _cloud(whatsapp_settings, _tap("satisfacao:ok", "😐 Ok"))
    await run_burst(whatsapp_settings, model=model)
    assert len(model.requests) == calls  # the agent does not answer the tap
    await _cloud(whatsapp_settings, _text("Demorou um pouco, mas deu certo"))
    await run_burst(whatsapp_settings, model=model)
    assert len(model.requests) == calls + 1
    last = str(model.requests[-1].messages[-1].content)
    assert last.splitlines()[-1] == "Demorou um pouco, mas deu certo"
    assert fake_graph.sends[-1] == ("text", AGENT_REPLY)

    async with running_api(whatsapp_settings, resources.store) as api:
        listed = await api.get("/v1/satisfaction", editor)
        assert listed.status == 200, listed.body
        bad_range = await api.get("/v1/satisfaction?from=2026-01-10&to=2026-01-01", editor)
        assert (bad_range.status, bad_range.body["error"]) == (422, "invalid_range")
    [answer] = listed.body["items"]
    assert answer["conversation_id"] == item["id"]
    assert (answer["held_by"], answer["score"], answer["answer"]) == (editor[:12], 2, "😐 Ok")
    assert answer["comment"] == "Demorou um pouco, mas deu certo"
    [person] = listed.body["per_person"]
    assert (person["held_by"], person["answers"], person["ok"], person["score"]) == (
        editor[:12],
        1,
        1,
        2.0,
    )
    [week] = listed.body["per_week"]
    assert week["answers"] == 1 and week["score"] == 2.0

    # Another org reads none of it.
    other_org, other_editor, _ = await _org(db, ChannelKind.WAHA)
    async with running_api(whatsapp_settings, resources.store) as api:
        theirs = await api.get("/v1/satisfaction", other_editor)
    assert theirs.body["items"] == [] and theirs.body["per_person"] == []
    assert other_org != org


async def test_never_outside_the_window_nor_to_an_opted_out_customer(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org, editor, _ = await _org(db, ChannelKind.CLOUD_API)
    await db.execute("update organizations set satisfaction = true where id = $1", org)
    model = CountingModel()
    await _cloud(whatsapp_settings, _text("Oi", age_s=25 * 3600))
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        path = f"/v1/conversations/{item['id']}"
        await api.call("POST", f"{path}/takeover", editor, json_body={})
        await db.execute(
            "update conversations set person_replied_at = now() where id = $1",
            uuid.UUID(item["id"]),
        )
        await api.call("POST", f"{path}/release", editor, json_body={})
    assert await db.fetchval("select count(*) from satisfaction_surveys") == 0

    await _cloud(whatsapp_settings, _text("PARAR"))
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        await _answer_and_release(api, editor)
    assert await db.fetchval("select count(*) from satisfaction_surveys") == 0


async def test_waha_asks_with_a_numbered_text_and_reads_1_as_the_best_answer(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
    resources: Resources,
) -> None:
    _, editor, admin = await _org(db, ChannelKind.WAHA)
    model = CountingModel()

    async def says(text: str) -> None:
        event = waha_event(
            SESSION,
            f"false_{CUSTOMER}@c.us_{uuid.uuid4().hex[:16].upper()}",
            text,
            sender=f"{CUSTOMER}@c.us",
            timestamp=int(time.time()),
        )
        async with running_webhook(whatsapp_settings) as hook:
            assert (await hook.post_waha(event)).status == 200

    await says("Oi, preciso de ajuda")
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        custom = {"satisfaction": "on", "satisfaction_buttons": ["Adorei", "Normal", "Não gostei"]}
        assert (await api.call("PATCH", "/v1/settings", admin, json_body=custom)).status == 200
        await _answer_and_release(api, editor)
    await run_burst(whatsapp_settings, model=model)
    assert fake_waha.sends[-1] == (
        "sendText",
        "Como foi o seu atendimento? Toque numa opção.\n\n1. Adorei\n2. Normal\n3. Não gostei"
        "\n\nResponda com o número da opção.",
    )
    calls = len(model.requests)
    await says("1")
    await run_burst(whatsapp_settings, model=model)
    assert len(model.requests) == calls
    await says("Foi rápido")
    await run_burst(whatsapp_settings, model=model)
    assert len(model.requests) == calls + 1  # the comment is answered
    row = await db.fetchrow("select score, answer, held_by, comment from satisfaction_surveys")
    assert tuple(row) == (3, "Adorei", editor[:12], "Foi rápido")
