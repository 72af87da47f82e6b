"""Choices the customer taps (send_choices), end to end on real Postgres, Redis and S3 with
real burst workers: a signed webhook delivery -> the model (scripted) offers slots -> the
reply's text goes out, then the choices: reply buttons or a list through the (fake) Graph API,
a numbered text through WAHA; the customer's tap (or "2") reaches the model as
`[escolheu: «...» (id: ...)]`. Meta refusing the choices fails that part only."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from api.keys import Role
from channels.credential_queries import upsert_channel_secrets_as_owner
from channels.queries import list_channels
from core.channel_kind import ChannelKind
from tests.integration.api_support import create_key, running_api
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi, FakeWaha
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value, waha_event
from turn.agent_queries import insert_agent
from turn.model import ModelRequest, ModelResponse, ToolCall
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242988"
SESSION = "loja-opcoes"
CUSTOMER = "5511912340088"
REPLY = "Tenho estes horários livres:"
SLOTS = [
    {"id": "s1", "title": "Quinta 10h"},
    {"id": "s2", "title": "Sexta 14h"},
    {"id": "s3", "title": "Sábado 9h"},
]
OWN_TOKEN = "EAAG-token-da-loja-opcoes-1"
NEW_TOKEN = "EAAG-token-da-loja-opcoes-2"
OFFER = {"text": "Qual horário fica melhor?", "choices": SLOTS}


@dataclass
class ChoicesModel:
    """Asked to book: calls send_choices with `offer`, then answers `reply` (REPLY; None: no
    text at all); anything else: "Combinado." Keeps the last line of every request's last user
    message."""

    offer: dict[str, Any]
    reply: str | None = REPLY
    seen: list[str] = field(default_factory=list)
    tool_answers: list[str] = field(default_factory=list)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        tools = [m for m in request.messages if m.role == "tool"]
        if tools:
            self.tool_answers = [str(m.content) for m in tools]
            return ModelResponse(text=self.reply, provider="local", model="local")
        last = str(request.messages[-1].content)
        self.seen.append(last.splitlines()[-1])  # after the customer's profile-name line
        if "agendar" not in last:
            return ModelResponse(text="Combinado.", provider="local", model="local")
        call = ToolCall("c1", "send_choices", self.offer)
        return ModelResponse(text=None, tool_calls=(call,), provider="local", model="local")


async def _org(db: asyncpg.Connection, kind: ChannelKind) -> uuid.UUID:
    org = await create_org(db, "Loja Opções")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, kind, NUMBER if kind is ChannelKind.CLOUD_API else SESSION)
    return org


async def _cloud_posts(settings: Settings, message: dict[str, Any]) -> None:
    async with running_webhook(settings) as hook:
        posted = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert posted.status == 200


def _cloud_text(text: str) -> dict[str, Any]:
    wamid = f"wamid.{uuid.uuid4().hex}"
    return cloud_text(wamid, text, sender=CUSTOMER, timestamp=int(time.time()))


def _cloud_tap(reply_type: str, choice_id: str, title: str) -> dict[str, Any]:
    return {
        "from": CUSTOMER,
        "id": f"wamid.{uuid.uuid4().hex}",
        "timestamp": str(int(time.time())),
        "type": "interactive",
        "interactive": {"type": reply_type, reply_type: {"id": choice_id, "title": title}},
    }


async def _waha_says(settings: Settings, text: str) -> None:
    event = waha_event(
        SESSION,
        f"false_{CUSTOMER}@c.us_{uuid.uuid4().hex[:16].upper()}",
        text,
        sender=f"{CUSTOMER}@c.us",
        timestamp=int(time.time()),
    )
    async with running_webhook(settings) as hook:
        assert (await hook.post_waha(event)).status == 200


PARTS = """
select o.part, o.status, o.last_error, o.choices is not null as choices
from outbox o join messages m on m.id = o.message_id
where m.body like $1 || '%'
order by o.part
"""


async def _parts(db: asyncpg.Connection) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in await db.fetch(PARTS, REPLY)]


async def test_three_slots_go_as_buttons_after_the_text_and_a_tap_reaches_the_model(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _org(db, ChannelKind.CLOUD_API)
    model = ChoicesModel(OFFER)
    await _cloud_posts(whatsapp_settings, _cloud_text("Oi, quero agendar um corte"))
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    assert "3 opções vão como botões" in model.tool_answers[0]
    [(kind, text), (interactive_kind, interactive)] = fake_graph.sends
    assert (kind, text, interactive_kind) == ("text", REPLY, "interactive")
    assert interactive == {
        "type": "button",
        "body": {"text": "Qual horário fica melhor?"},
        "action": {
            "buttons": [{"type": "reply", "reply": slot} for slot in SLOTS],
        },
    }
    assert await _parts(db) == [(0, "sent", None, False), (1, "sent", None, True)]
    receipts = await db.fetchval(
        "select array_agg(provider_message_id order by provider_message_id) from outbox_receipts"
    )
    assert receipts == ["wamid.interactive.2", "wamid.out.1"]
    key = await create_key(db, org, Role.VIEWER)
    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", key)).body["items"]
        messages = (await api.get(f"/v1/conversations/{item['id']}/messages", key)).body
    [reply] = [m for m in messages["items"] if m["direction"] == "outbound"]
    assert "files" not in reply
    # The stored reply keeps what it offered (the history shows it); the text sent does not.
    assert reply["body"] == (
        f"{REPLY}\n\n[opções: «Quinta 10h» (id: s1) · «Sexta 14h» (id: s2) · «Sábado 9h» (id: s3)]"
    )
    assert reply["choices"] == {
        "text": "Qual horário fica melhor?",
        "choices": [{**slot, "description": None} for slot in SLOTS],
        "status": "sent",
    }

    # The customer taps the second button: the model reads the choice, title and id.
    await _cloud_posts(whatsapp_settings, _cloud_tap("button_reply", "s2", "Sexta 14h"))
    await run_burst(whatsapp_settings, model=model)
    assert model.seen[-1] == "[escolheu: «Sexta 14h» (id: s2)]"
    assert fake_graph.sends[-1] == ("text", "Combinado.")


async def test_a_model_that_writes_nothing_but_the_choices_sends_no_apology_before_them(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    # Models often answer a tool call with no text: the fallback apology ("um atendente vai
    # continuar por aqui") before the buttons told the customer something broke. The choices'
    # own text leads instead, and the buttons follow under a short prompt.
    await _org(db, ChannelKind.CLOUD_API)
    model = ChoicesModel(OFFER, reply=None)
    await _cloud_posts(whatsapp_settings, _cloud_text("Oi, quero agendar um corte"))
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    [(kind, text), (interactive_kind, interactive)] = fake_graph.sends
    assert (kind, text, interactive_kind) == ("text", "Qual horário fica melhor?", "interactive")
    assert interactive["body"] == {"text": "Escolha uma opção:"}
    assert [b["reply"] for b in interactive["action"]["buttons"]] == SLOTS
    mode = await db.fetchval("select mode from conversations")
    assert mode == "agent"  # nobody was called in: the conversation is the agent's still


async def test_five_options_go_as_a_list_and_a_row_tap_reaches_the_model(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, ChannelKind.CLOUD_API)
    rows = [
        {"id": f"r{i}", "title": f"Dia {i} às 10h", "description": "com a Ana"} for i in range(5)
    ]
    model = ChoicesModel({"text": "Escolha um dia:", "choices": rows, "button": "Ver dias"})
    await _cloud_posts(whatsapp_settings, _cloud_text("Quero agendar"))
    await run_burst(whatsapp_settings, model=model)
    [_, (kind, interactive)] = fake_graph.sends
    assert (kind, interactive["type"]) == ("interactive", "list")
    assert interactive["action"] == {"button": "Ver dias", "sections": [{"rows": rows}]}

    await _cloud_posts(whatsapp_settings, _cloud_tap("list_reply", "r3", "Dia 3 às 10h"))
    await run_burst(whatsapp_settings, model=model)
    assert model.seen[-1] == "[escolheu: «Dia 3 às 10h» (id: r3)]"


async def test_meta_refusing_the_choices_fails_that_part_only_with_a_reason_in_portuguese(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    await _org(db, ChannelKind.CLOUD_API)
    model = ChoicesModel(OFFER)
    fake_graph.interactive_refusal = (131051, "Unsupported message type")
    await _cloud_posts(whatsapp_settings, _cloud_text("Quero agendar"))
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    [text, choices] = await _parts(db)
    assert text == (0, "sent", None, False)
    assert choices[:2] == (1, "failed") and choices[3] is True
    assert choices[2].startswith(
        "send_rejected: As opções não foram enviadas: este tipo de mensagem não é aceito para "
        "este número "
        "(erro 131051)."
    )


async def test_the_choices_wait_with_the_text_for_a_new_token_then_go_in_order(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
) -> None:
    org = await _org(db, ChannelKind.CLOUD_API)
    [channel] = await list_channels(db, org)
    await upsert_channel_secrets_as_owner(db, channel, access_token=OWN_TOKEN)
    fake_graph.own(OWN_TOKEN, NUMBER)
    fake_graph.revoke(OWN_TOKEN)  # Meta refuses it (190): the number's replies wait
    model = ChoicesModel(OFFER)
    await _cloud_posts(whatsapp_settings, _cloud_text("Quero agendar"))
    assert (await run_burst(whatsapp_settings, model=model)).jobs_failed == 0
    assert fake_graph.sends == []
    assert await _parts(db) == [(0, "pending", None, False), (1, "pending", None, True)]

    fake_graph.own(NEW_TOKEN, NUMBER)
    await upsert_channel_secrets_as_owner(db, channel, access_token=NEW_TOKEN)
    await db.execute("update channels set status = 'active'")
    await _cloud_posts(whatsapp_settings, _cloud_text("Oi?"))  # the next holder sends first
    await run_burst(whatsapp_settings, model=model)
    assert [kind for kind, _ in fake_graph.sends] == ["text", "interactive", "text"]
    assert fake_graph.sends[-1] == ("text", "Combinado.")
    assert await _parts(db) == [(0, "sent", None, False), (1, "sent", None, True)]


async def test_waha_gets_a_numbered_text_and_a_2_is_read_as_the_second_choice(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_waha: FakeWaha,
) -> None:
    await _org(db, ChannelKind.WAHA)
    model = ChoicesModel(OFFER)
    await _waha_says(whatsapp_settings, "Quero agendar, por favor")
    worker = await run_burst(whatsapp_settings, model=model)
    assert worker.jobs_failed == 0
    assert fake_waha.sends == [
        ("sendText", REPLY),
        (
            "sendText",
            "Qual horário fica melhor?\n\n1. Quinta 10h\n2. Sexta 14h\n3. Sábado 9h\n\n"
            "Responda com o número da opção.",
        ),
    ]
    assert await _parts(db) == [(0, "sent", None, False), (1, "sent", None, True)]

    await _waha_says(whatsapp_settings, "2")
    await run_burst(whatsapp_settings, model=model)
    assert model.seen[-1] == "[escolheu: «Sexta 14h» (id: s2)]"
    # The choices are no longer the business's last message: a "3" is just a "3".
    await _waha_says(whatsapp_settings, "3")
    await run_burst(whatsapp_settings, model=model)
    assert model.seen[-1] == "3"


async def test_waha_reads_the_exact_title_too(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_waha: FakeWaha,
) -> None:
    await _org(db, ChannelKind.WAHA)
    model = ChoicesModel(OFFER)
    await _waha_says(whatsapp_settings, "Quero agendar")
    await run_burst(whatsapp_settings, model=model)
    await _waha_says(whatsapp_settings, "  sábado 9H ")
    await run_burst(whatsapp_settings, model=model)
    assert model.seen[-1] == "[escolheu: «Sábado 9h» (id: s3)]"
