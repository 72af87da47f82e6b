"""The customer's opt-out (LGPD), end to end: a Cloud API webhook, real burst workers, a fake
Graph API. PARAR is confirmed once and never answered by the agent, in every mode; VOLTAR
opts back in; anything else is still answered; the API shows it."""

from __future__ import annotations

import time
import uuid
from typing import Any

import asyncpg

from api.keys import Role
from conversation.opt_out import OPT_IN_CONFIRMATION, OPT_OUT_CONFIRMATION
from core.channel_kind import ChannelKind
from jobs.payloads import ConversationPayload
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, enqueue_raw, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242933"
CUSTOMER = "5511912340000"


async def customer_says(settings: Settings, text: str, *, number: str = NUMBER) -> str:
    wamid = f"wamid.{uuid.uuid4().hex}"
    message = cloud_text(wamid, text, sender=CUSTOMER, timestamp=int(time.time()))
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(number, [message])))
    assert answer.status == 200
    return wamid


async def _setup(db: asyncpg.Connection) -> tuple[uuid.UUID, str]:
    org = await create_org(db, "Loja Opt-out")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    return org, await create_key(db, org, Role.EDITOR)


async def _conversation(api: ApiClient, key: str) -> dict[str, Any]:
    [item] = (await api.get("/v1/conversations", key)).body["items"]
    return dict(item)


def _texts(graph: FakeGraphApi) -> list[str]:
    return [text for _, _, text in graph.delivered]


async def test_parar_is_confirmed_once_never_answered_and_voltar_opts_back_in(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    _, editor = await _setup(db)
    model = CountingModel()
    await customer_says(whatsapp_settings, "Oi, tudo bem?")
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_graph) == [AGENT_REPLY]
    async with running_api(whatsapp_settings, resources.store) as api:
        item = await _conversation(api, editor)
        assert (item["opted_out"], item["opted_out_at"]) == (False, None)

        await customer_says(whatsapp_settings, "  Parar!! 🙏 ")
        worker = await run_burst(whatsapp_settings, model=model)
        metrics = worker.ctx["metrics"]
        assert metrics.opt_choices.labels(choice="out")._value.get() == 1
        assert _texts(fake_graph) == [AGENT_REPLY, OPT_OUT_CONFIRMATION]
        assert len(model.requests) == 1  # the agent never saw it
        item = await _conversation(api, editor)
        assert item["opted_out"] is True and item["opted_out_at"] is not None
        assert item["unanswered"] == 0

        # The customer's own messages are still answered; a bare "sair" is one of them.
        await customer_says(whatsapp_settings, "sair")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph)[-1] == AGENT_REPLY and len(model.requests) == 2
        assert (await _conversation(api, editor))["opted_out"] is True

        # The same job run again (a redelivery, a crash) confirms nothing twice.
        wamid = await customer_says(whatsapp_settings, "sair da lista")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph).count(OPT_OUT_CONFIRMATION) == 2
        row = await db.fetchrow(
            "select organization_id, conversation_id, id from messages where external_id = $1",
            wamid,
        )
        again = ConversationPayload(
            organization_id=row["organization_id"],
            conversation_id=row["conversation_id"],
            inbound_id=row["id"],
            message_id=wamid,
        )
        await enqueue_raw(whatsapp_settings, again.model_dump(mode="json"))
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph).count(OPT_OUT_CONFIRMATION) == 2

        await customer_says(whatsapp_settings, "Voltar.")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph)[-1] == OPT_IN_CONFIRMATION and len(model.requests) == 2
        assert (await _conversation(api, editor))["opted_out"] is False
    choices = await db.fetch("select choice from contact_opt_choices order by created_at")
    assert [r["choice"] for r in choices] == ["out", "out", "in"]


async def test_parar_is_confirmed_while_a_person_holds_the_conversation(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
) -> None:
    _, editor = await _setup(db)
    model = CountingModel()
    await customer_says(whatsapp_settings, "Bom dia")
    await run_burst(whatsapp_settings, model=model)
    async with running_api(whatsapp_settings, resources.store) as api:
        path = f"/v1/conversations/{(await _conversation(api, editor))['id']}"
        taken = await api.call("POST", f"{path}/takeover", editor, json_body={})
        assert taken.status == 200
        await customer_says(whatsapp_settings, "STOP")
        await run_burst(whatsapp_settings, model=model)
        assert _texts(fake_graph) == [AGENT_REPLY, OPT_OUT_CONFIRMATION]
        assert len(model.requests) == 1  # the agent still does not answer
        shown = (await api.get(path, editor)).body
        assert (shown["mode"], shown["opted_out"], shown["unanswered"]) == ("human", True, 0)
        # Its other messages wait for the person, unanswered by the agent.
        await customer_says(whatsapp_settings, "Parar de mandar o quê? Quero meu pedido")
        await run_burst(whatsapp_settings, model=model)
        assert len(fake_graph.delivered) == 2 and len(model.requests) == 1
        assert (await api.get(path, editor)).body["unanswered"] == 1


async def test_a_long_message_with_the_word_is_an_ordinary_message(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
) -> None:
    await _setup(db)
    model = CountingModel()
    await customer_says(whatsapp_settings, "PARAR " + "!" * 5_000)
    await run_burst(whatsapp_settings, model=model)
    assert _texts(fake_graph) == [AGENT_REPLY]
    assert await db.fetchval("select count(*) from contact_opt_choices") == 0
