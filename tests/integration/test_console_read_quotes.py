"""The conversation page in a real browser: a customer's quote shows above their message and
their reaction on the reply it reacts to; an editor opening the conversation marks its new
customer messages read at the fake Graph API once each (a viewer, the page's poll, a reload
and an API read mark nothing). The skills page counts the negative reaction against the skill."""

from __future__ import annotations

import time
import uuid
from typing import Any

import asyncpg
from playwright.async_api import BrowserContext, expect

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import api_presence, create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, publish, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_reaction, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
CUSTOMER = "5511912345678"


async def _post(settings: Settings, message: dict[str, Any]) -> None:
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200, answer.body


def _says(message_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return cloud_text(message_id, text, sender=CUSTOMER, timestamp=int(time.time()), **extra)


async def test_an_editor_opening_the_conversation_marks_new_messages_read_once(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Console")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    await publish(db, resources.store, org, "horarios", keywords=["sábado"])
    viewer = await create_key(db, org, Role.VIEWER)
    editor = await create_key(db, org, Role.EDITOR)
    model = CountingModel()
    await _post(whatsapp_settings, _says("wamid.c.1", "Vocês abrem sábado?"))
    await run_burst(whatsapp_settings, model=model)
    await _post(
        whatsapp_settings,
        cloud_reaction(
            f"wamid.r.{uuid.uuid4().hex}",
            "wamid.out.1",
            "👎",
            sender=CUSTOMER,
            timestamp=int(time.time()),
        ),
    )
    await _post(whatsapp_settings, _says("wamid.c.2", "e no domingo?", quoting="wamid.out.1"))
    await run_burst(whatsapp_settings, model=model)
    conversation = await db.fetchval("select id from conversations where organization_id = $1", org)
    # A person holds it: the customer's next message is neither answered nor marked read.
    async with running_api(whatsapp_settings, resources.store) as api:
        taken = await api.call(
            "POST", f"/v1/conversations/{conversation}/takeover", editor, json_body={}
        )
        assert taken.status == 200, taken.body
    await _post(whatsapp_settings, _says("wamid.c.3", "alguém aí?"))
    await run_burst(whatsapp_settings, model=model)
    assert [m for _, m, _ in fake_graph.read_marks] == ["wamid.c.1", "wamid.c.2"]

    async with (
        api_presence(whatsapp_settings) as presence,
        running_api(whatsapp_settings, resources.store, presence=presence) as api,
    ):
        address = f"{api.base_url}/console/conversas/{conversation}"
        page = await context.new_page()
        await sign_in(page, api.base_url, viewer)
        await page.goto(address)
        await presence.aclose()
        assert len(fake_graph.read_marks) == 2  # a viewer only reads

        await sign_in(page, api.base_url, editor)
        await page.goto(address)
        await presence.aclose()
        assert fake_graph.read_marks[2:] == [(NUMBER, "wamid.c.3", False)]
        # The page's poll, a reload and an API read mark nothing more.
        async with page.expect_response(lambda r: r.url.endswith("/dados")):
            pass
        await page.reload()
        listed = await api.get(f"/v1/conversations/{conversation}/messages", editor)
        assert listed.status == 200
        await presence.aclose()
        assert len(fake_graph.read_marks) == 3

        quoting = page.locator("li.msg", has_text="e no domingo?")
        await expect(quoting.locator(".citacao")).to_have_text(f"em resposta a: {AGENT_REPLY}")
        reply = page.locator("li.msg.autor-agent").first
        await expect(reply.locator(".reacoes")).to_have_text("reação do cliente: 👎")
        # The poll redraws the thread from JSON: the quote and the reaction stay.
        async with page.expect_response(lambda r: r.url.endswith("/dados")):
            pass
        await expect(reply.locator(".reacoes [data-emoji]")).to_have_text("👎")
        await expect(quoting.locator(".citacao")).to_contain_text(AGENT_REPLY)
        await shot(page, "conversa-citacao-reacao")
        await page.goto(f"{api.base_url}/console/skills")
        row = page.locator("tr", has_text="horarios")
        await expect(row.locator("td.num").nth(3)).to_have_text("1")
        await shot(page, "skills-reacoes-negativas")
