"""WhatsApp as customers use it, end to end on a signed webhook, real burst workers and the fake
Graph API / WAHA: the customer's message read with the typing indicator before the reply, a
quote the model reads, a reaction kept on the reply it reacts to (never a turn) and counted
against the skill that reply used, and nothing of it reaching the curator."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from api.keys import Role
from channels.credential_queries import upsert_channel_secrets_as_owner
from core.channel_kind import ChannelKind
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.support import create_org, publish, run_burst
from tests.integration.webhook_support import connect_number, queued_payloads, running_webhook
from tests.integration.whatsapp_fakes import Answer, FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import (
    cloud_delivery,
    cloud_reaction,
    cloud_text,
    cloud_value,
    waha_event,
    waha_reaction,
    waha_reply_to,
)
from turn.agent_queries import insert_agent
from turn.model import ModelRequest, ModelResponse
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
SESSION = "loja-leituras"
CUSTOMER = "5511912345678"
QUESTION = "Sexta às 14h serve?"


@dataclass
class ThinkingModel:
    """Takes its time like a real model: answers QUESTION only once `ready()` holds (the
    customer's phone already shows the read and the typing indicator), 10 s at most."""

    ready: Callable[[], bool]
    requests: list[ModelRequest] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        for _ in range(1000):
            if self.ready():
                break
            await asyncio.sleep(0.01)
        return ModelResponse(text=QUESTION, provider="local", model="local")


async def _post(settings: Settings, *messages: dict[str, Any]) -> dict[str, Any]:
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, list(messages))))
    assert answer.status == 200, answer.body
    return dict(answer.body)


async def _says(settings: Settings, message_id: str, text: str, **extra: Any) -> None:
    stamp = int(time.time())
    body = await _post(
        settings, cloud_text(message_id, text, sender=CUSTOMER, timestamp=stamp, **extra)
    )
    assert body["enqueued"] == 1, body


async def _reacts(settings: Settings, reaction_id: str, target: str, emoji: str) -> dict[str, Any]:
    stamp = int(time.time())
    return await _post(
        settings, cloud_reaction(reaction_id, target, emoji, sender=CUSTOMER, timestamp=stamp)
    )


async def _messages(api: ApiClient, key: str) -> list[dict[str, Any]]:
    [conversation] = (await api.get("/v1/conversations", key)).body["items"]
    answer = await api.get(f"/v1/conversations/{conversation['id']}/messages", key)
    assert answer.status == 200, answer.body
    return list(answer.body["items"])


async def _negative(api: ApiClient, key: str) -> tuple[int, int]:
    shown = await api.get("/v1/skills/agenda/activations", key)
    [listed] = (await api.get("/v1/skills", key)).body["items"]
    assert shown.status == 200, shown.body
    return (
        shown.body["last_30_days"]["negative_reactions"],
        listed["last_30_days"]["negative_reactions"],
    )


async def _usage(db: asyncpg.Connection, org: uuid.UUID) -> list[dict[str, Any]]:
    rows = await db.fetch("select * from skill_usage where organization_id = $1", org)
    return [dict(r) for r in rows]


async def test_read_and_typing_before_the_reply_then_a_quote_and_a_reaction(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja Leituras")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    await publish(db, resources.store, org, "agenda", keywords=["agendar"])
    key = await create_key(db, org, Role.EDITOR)
    model = ThinkingModel(ready=lambda: bool(fake_graph.read_marks))

    await _says(whatsapp_settings, "wamid.in.1", "Quero agendar um horário")
    await run_burst(whatsapp_settings, model=model)
    # The read mark (with the typing indicator) reached Meta before the reply did.
    assert fake_graph.read_marks == [(NUMBER, "wamid.in.1", True)]
    assert fake_graph.timeline == [("read", "wamid.in.1"), ("text", QUESTION)]
    usage_before = await _usage(db, org)

    # The customer reacts 👎 to the reply: kept on it, no job, no turn.
    reacted = await _reacts(whatsapp_settings, "wamid.r.1", "wamid.out.1", "👎🏽")
    unknown = await _reacts(whatsapp_settings, "wamid.r.2", "wamid.nunca.visto", "👍")
    assert (reacted["reactions"], reacted["enqueued"]) == (1, 0)
    assert (unknown["reactions"], unknown["enqueued"]) == (1, 0)
    assert await queued_payloads(whatsapp_settings) == []
    kept = await db.fetchrow(
        "select target_id, emoji from message_reactions where target_external_id = $1",
        "wamid.nunca.visto",
    )
    assert kept is not None and (kept["target_id"], kept["emoji"]) == (None, "👍")
    # Reactions are information for the business only: what the curator judges by (and
    # consolidation with it) is what the turns wrote, untouched by any reaction.
    assert await _usage(db, org) == usage_before
    async with running_api(whatsapp_settings, resources.store) as api:
        assert await _negative(api, key) == (1, 1)
        question, reply = await _messages(api, key)
        assert question["reactions"] == [] and question["reply_to"] is None
        [reaction] = reply["reactions"]
        assert (reaction["emoji"], reaction["from"]) == ("👎🏽", CUSTOMER)

    # The customer swipes to reply to the agent's question: the model reads the quote first.
    await _says(whatsapp_settings, "wamid.in.2", "essa aqui", quoting="wamid.out.1")
    await run_burst(whatsapp_settings, model=model)
    # (After the line with the customer's profile name: the quote opens their own text.)
    shown = model.requests[-1].messages[-1].content.splitlines()
    assert shown[-1] == f"[em resposta a: «{QUESTION}»] essa aqui"
    assert fake_graph.read_marks[-1] == (NUMBER, "wamid.in.2", True)
    async with running_api(whatsapp_settings, resources.store) as api:
        messages = await _messages(api, key)
        quoting = next(m for m in messages if m["external_id"] == "wamid.in.2")
        assert quoting["body"] == "essa aqui"
        assert quoting["reply_to"] == {
            "message_id": reply["id"],
            "external_id": "wamid.out.1",
            "text": QUESTION,
        }
        # Taken back (an empty emoji, as WhatsApp sends it): gone, and no longer counted.
        removed = await _reacts(whatsapp_settings, "wamid.r.3", "wamid.out.1", "")
        assert removed["reactions"] == 1
        assert await _negative(api, key) == (0, 0)
        reply_now = next(m for m in await _messages(api, key) if m["id"] == reply["id"])
        assert reply_now["reactions"] == []


def test_no_curator_or_consolidation_code_reads_reactions() -> None:
    root = Path(__file__).resolve().parents[2]
    sources = [*root.glob("skills/curator/**/*.py"), *root.glob("consolidation/**/*.py")]
    assert sources
    assert not [p for p in sources if "message_reactions" in p.read_text(encoding="utf-8")]
    curator_sql = (root / "skillet_data" / "functions.sql").read_text(encoding="utf-8")
    start = curator_sql.index("FUNCTION public.skillet_curator_pass(")
    end = curator_sql.index("$function$;", start)
    assert "message_reactions" not in curator_sql[start:end]


async def test_a_failed_read_mark_never_fails_or_repeats_the_turn(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    org = await create_org(db, "Loja Falha")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    fake_graph.script = [Answer(500, {"error": {"code": 2, "message": "unavailable"}})]
    model = ThinkingModel(ready=lambda: bool(fake_graph.received))
    await _says(whatsapp_settings, "wamid.in.9", "Oi!")
    worker = await run_burst(whatsapp_settings, model=model)
    assert (worker.jobs_complete, worker.jobs_failed, worker.jobs_retried) == (1, 0, 0)
    assert fake_graph.received[0].body["status"] == "read"  # tried once, refused
    assert fake_graph.read_marks == [] and fake_graph.timeline == [("text", QUESTION)]
    assert len(model.requests) == 1


async def test_waha_reads_types_and_stops_typing_and_both_settings_off_send_neither(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_waha: FakeWaha,
) -> None:
    org = await create_org(db, "Loja WAHA")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.WAHA, SESSION)
    chat = f"{CUSTOMER}@c.us"
    model = ThinkingModel(ready=lambda: len(fake_waha.presence) >= 2)
    async with running_webhook(whatsapp_settings) as hook:
        posted = await hook.post_waha(
            waha_event(SESSION, "false_1@c.us_AAA", "Oi", sender=chat, timestamp=int(time.time()))
        )
    assert posted.body["enqueued"] == 1
    await run_burst(whatsapp_settings, model=model)
    assert fake_waha.timeline == [
        ("sendSeen", chat),
        ("startTyping", chat),
        ("sendText", QUESTION),
        ("stopTyping", chat),
    ]
    assert fake_waha.presence[0] == ("sendSeen", chat, ["false_1@c.us_AAA"])

    # A reaction on WAHA: kept, never answered.
    async with running_webhook(whatsapp_settings) as hook:
        posted = await hook.post_waha(
            waha_reaction(SESSION, "false_r1", "true_x_1", "😡", sender=chat)
        )
    assert (posted.body["reactions"], posted.body["enqueued"]) == (1, 0)

    quiet = whatsapp_settings.model_copy(update={"read_receipts": False, "typing_indicator": False})
    fake_waha.timeline.clear()
    async with running_webhook(quiet) as hook:
        await hook.post_waha(
            waha_event(
                SESSION, "false_2@c.us_BBB", "E aí?", sender=chat, timestamp=int(time.time())
            )
        )
    await run_burst(quiet, model=ThinkingModel(ready=lambda: True))
    assert fake_waha.timeline == [("sendText", QUESTION)]


async def test_another_customers_message_can_be_neither_quoted_nor_reacted_to(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    org = await create_org(db, "Loja Vizinhos")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    key = await create_key(db, org, Role.VIEWER)
    model = ThinkingModel(ready=lambda: True)
    await _says(whatsapp_settings, "wamid.ana.1", "Meu CPF é 123.456.789-00")
    await run_burst(whatsapp_settings, model=model)
    other = "5521988887777"
    stamp = int(time.time())
    quoting = cloud_text(
        "wamid.bob.1", "e esse?", sender=other, timestamp=stamp, quoting="wamid.ana.1"
    )
    await _post(whatsapp_settings, quoting)
    await _post(
        whatsapp_settings,
        cloud_reaction("wamid.bob.r", "wamid.ana.1", "👎", sender=other, timestamp=stamp),
    )
    await run_burst(whatsapp_settings, model=model)
    # Bob's model input and his conversation know nothing of Ana's message.
    assert model.requests[-1].messages[-1].content.splitlines()[-1] == (
        "[em resposta a: uma mensagem anterior] e esse?"
    )
    async with running_api(whatsapp_settings, resources.store) as api:
        listed = (await api.get("/v1/conversations", key)).body["items"]
        by_contact = {c["contact_id"]: c["id"] for c in listed}
        ana = await api.get(f"/v1/conversations/{by_contact[CUSTOMER]}/messages", key)
        bob = await api.get(f"/v1/conversations/{by_contact[other]}/messages", key)
    assert all(m["reactions"] == [] for m in ana.body["items"])
    bob_quoting = next(m for m in bob.body["items"] if m["external_id"] == "wamid.bob.1")
    assert bob_quoting["reply_to"] == {
        "message_id": None,
        "external_id": "wamid.ana.1",
        "text": None,
    }


async def test_no_read_mark_when_the_model_will_not_answer(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    """PARAR (confirmed, never answered) and asking for a person (a fixed acknowledgement)
    are not the model's: neither is marked read with the agent typing."""
    org = await create_org(db, "Loja Sem Leitura")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    model = ThinkingModel(ready=lambda: True)
    await _says(whatsapp_settings, "wamid.s.1", "PARAR")
    await run_burst(whatsapp_settings, model=model)
    await _says(whatsapp_settings, "wamid.s.2", "quero falar com um atendente")
    await run_burst(whatsapp_settings, model=model)
    assert len(fake_graph.delivered) == 2  # the confirmation and the acknowledgement
    assert model.requests == [] and fake_graph.read_marks == []


async def test_the_read_mark_goes_with_the_numbers_own_token(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    own_token = "token-proprio-do-numero-0001"
    org = await create_org(db, "Loja Token Próprio")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    channel = await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    await upsert_channel_secrets_as_owner(db, channel, access_token=own_token)
    fake_graph.own(own_token, NUMBER)  # Meta lets only that token touch the number
    model = ThinkingModel(ready=lambda: bool(fake_graph.read_marks))
    await _says(whatsapp_settings, "wamid.own.1", "Oi!")
    await run_burst(whatsapp_settings, model=model)
    assert fake_graph.timeline == [("read", "wamid.own.1"), ("text", QUESTION)]
    assert {r.headers["Authorization"] for r in fake_graph.received} == {f"Bearer {own_token}"}


async def test_a_quote_of_a_megabyte_is_cut_at_the_door_and_a_flood_emoji_refused(
    whatsapp_settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db, "Loja Hostil")
    await connect_number(db, org, ChannelKind.WAHA, SESSION)
    chat = f"{CUSTOMER}@c.us"
    quote = waha_reply_to("true_x_1", "q" * 1_000_000)
    async with running_webhook(whatsapp_settings) as hook:
        quoted = await hook.post_waha(
            waha_event(SESSION, "false_big", "essa", sender=chat, extra=quote)
        )
        flood = await hook.post_waha(
            waha_reaction(SESSION, "false_flood", "true_x_1", "👎" * 1_000, sender=chat)
        )
    assert (quoted.status, quoted.body["enqueued"]) == (200, 1)
    assert (flood.status, flood.body["skipped"], flood.body.get("reactions", 0)) == (200, 1, 0)
    stored = await db.fetchrow(
        "select body, quote_external_id, length(quote_text) as chars from messages"
        " where organization_id = $1",
        org,
    )
    assert stored is not None
    assert (stored["body"], stored["quote_external_id"], stored["chars"]) == (
        "essa",
        "true_x_1",
        1_024,
    )
    assert (
        await db.fetchval("select count(*) from message_reactions where organization_id = $1", org)
        == 0
    )
