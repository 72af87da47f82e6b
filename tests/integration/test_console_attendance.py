"""Atendimento in a real browser: a customer who asks for a person waits on the first page; a
person takes the conversation, replies from the box (a real burst worker hands it to a fake
Graph API), gives it back, and the agent answers the next message. A new waiting
conversation shows up on the open page within 5 s, without a reload, written as text."""

from __future__ import annotations

import time
import uuid

import asyncpg
from playwright.async_api import Browser, BrowserContext, Page, expect

from api.keys import Role
from core.channel_kind import ChannelKind
from inbox.profile_names import formatted_number
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.console_support import csrf_of, shot, sign_in
from tests.integration.mode_support import AGENT_REPLY, CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
ANA = "5511912345678"
BRUNO = "5521987654321"
HOSTILE_TEXT = "<img src=x onerror=alert(1)> quero falar com um atendente"
POLL_DEADLINE_MS = 5000  # the pages promise an update within 5 s


async def _customer_says(settings: Settings, sender: str, text: str) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=sender, timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


def _texts(graph: FakeGraphApi) -> list[str]:
    return [text for _, _, text in graph.delivered]


async def _no_reload_marker(page: Page) -> None:
    # A value only this document holds: a reload (or a navigation) would lose it.
    await page.evaluate("window.__sem_recarregar = 1")


async def _still_same_document(page: Page) -> bool:
    return bool(await page.evaluate("window.__sem_recarregar === 1"))


async def _another_person_is_refused(page: Page, other: Page) -> None:
    """A second editor sees who holds it, is offered neither Assumir nor the reply box, and
    a takeover posted anyway is refused on the page (409, in pt-BR)."""
    address = page.url.split("?")[0]
    await other.goto(address)
    assert "com skt_" in await other.locator("[data-state]").inner_text()
    await expect(other.locator("[data-offer=takeover]")).to_be_hidden()
    await expect(other.locator("[data-offer=reply]")).to_be_hidden()
    answer = await other.request.post(f"{address}/assumir", form={"csrf": await csrf_of(other)})
    text = await answer.text()
    assert answer.status == 409 and "held_by_other" in text
    assert "Outra pessoa está com esta conversa" in text


async def _take_reply_release(
    settings: Settings,
    api: ApiClient,
    pages: tuple[Page, Page],
    graph: FakeGraphApi,
    model: CountingModel,
) -> None:
    page, other = pages
    card = page.locator("[data-list=waiting] li.conversa", has_text=formatted_number(ANA))
    await card.locator("a.contato").click()
    await page.wait_for_url(f"{api.base_url}/console/conversas/*")
    thread = page.locator("ol.mensagens")
    customer = thread.locator("li.autor-customer").first
    await expect(customer.locator(".quem-disse")).to_have_text("Cliente")
    await expect(customer.locator(".balao")).to_have_text("quero falar com um atendente")
    await expect(page.locator("[data-field=mode_label]")).to_have_text("Esperando uma pessoa")
    assert "pedido do cliente" in await page.locator("[data-field=why]").inner_text()

    await page.click("button:has-text('Assumir')")
    await page.wait_for_url("**?feito=conversa-assumida")
    await expect(page.locator("[data-field=mode_label]")).to_have_text("Com uma pessoa")
    assert "(você)" in await page.locator("[data-field=holder]").inner_text()
    await expect(page.locator("[data-offer=takeover]")).to_be_hidden()
    await _another_person_is_refused(page, other)

    # Blank text is refused on the page (422), in pt-BR; the box keeps what was typed.
    await page.fill("#text", "   ")
    async with page.expect_response(lambda r: r.url.endswith("/responder")) as refused:
        await page.click("button:has-text('Enviar')")
    assert (await refused.value).status == 422
    assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "reply_text_invalid"
    assert "caracteres" in await page.locator("#text + .campo-erro").inner_text()  # beside it

    await page.fill("#text", "Oi! Sou a Ana, do atendimento. O prazo é de 3 dias.")
    await page.click("button:has-text('Enviar')")
    await page.wait_for_url("**?feito=resposta-enviada")
    await _no_reload_marker(page)
    await run_burst(settings, model=model)  # the job the reply enqueued delivers it
    assert _texts(graph)[-1] == "Oi! Sou a Ana, do atendimento. O prazo é de 3 dias."
    person = thread.locator("li.autor-person").last
    assert (await person.locator(".quem-disse").inner_text()).startswith("Atendente (skt_")
    # The delivery's status reaches the open page by its poll.
    await expect(person.locator(".meta")).to_contain_text(
        "entrega: enviada", timeout=POLL_DEADLINE_MS
    )
    assert await _still_same_document(page)
    await shot(page, "attendance-02-conversa")

    await page.check("input[name=answer_pending]")
    await page.click("button:has-text('Devolver ao agente')")
    await page.wait_for_url("**?feito=conversa-devolvida")
    await expect(page.locator("[data-field=mode_label]")).to_have_text("Com o agente")
    await _no_reload_marker(page)
    await _customer_says(settings, ANA, "E o frete?")
    await run_burst(settings, model=model)
    assert _texts(graph)[-1] == AGENT_REPLY
    agent = thread.locator("li.autor-agent").last
    await expect(agent.locator(".balao")).to_have_text(AGENT_REPLY, timeout=POLL_DEADLINE_MS)
    await expect(agent.locator(".quem-disse")).to_have_text("Agente")
    assert await _still_same_document(page)
    await shot(page, "attendance-03-devolvida")


async def test_a_person_takes_a_waiting_conversation_replies_and_gives_it_back(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    browser: Browser,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Atendimento")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    key = await create_key(db, org, Role.EDITOR, "balcao")
    other_key = await create_key(db, org, Role.EDITOR, "caixa")
    model = CountingModel()
    await _customer_says(whatsapp_settings, ANA, "quero falar com um atendente")
    await run_burst(whatsapp_settings, model=model)
    assert model.requests == []  # handed over before any model call

    async with running_api(whatsapp_settings, resources.store) as api:
        page = await context.new_page()
        await sign_in(page, api.base_url, key)  # lands on Atendimento
        nav = page.locator(".topo nav a")
        await expect(nav.first).to_have_text("Atendimento")
        card = page.locator("[data-list=waiting] li.conversa", has_text=formatted_number(ANA))
        await expect(card.locator(".motivo")).to_have_text("pedido do cliente")
        await expect(card.locator(".espera")).to_have_text("espera há menos de 1 min")
        # The last message is the wait notice the customer got, the agent's.
        assert (await card.locator(".ultima").inner_text()).startswith("Agente: ")
        await shot(page, "attendance-01-fila")

        other_context = await browser.new_context(locale="pt-BR")
        other = await other_context.new_page()
        await sign_in(other, api.base_url, other_key)
        pages = (page, other)
        await _take_reply_release(whatsapp_settings, api, pages, fake_graph, model)
        await other_context.close()
        assert len(model.requests) == 1

        # The open Atendimento page shows a new waiting conversation without a reload.
        await page.click(".topo nav a:has-text('Atendimento')")
        await expect(page.locator("[data-empty=waiting]")).to_be_visible()
        await _no_reload_marker(page)
        await _customer_says(whatsapp_settings, BRUNO, HOSTILE_TEXT)
        await run_burst(whatsapp_settings, model=model)
        arrived = page.locator("[data-list=waiting] li.conversa", has_text=formatted_number(BRUNO))
        await expect(arrived).to_be_visible(timeout=POLL_DEADLINE_MS)
        assert await _still_same_document(page)
        await expect(page.locator("[data-count=waiting]")).to_have_text("1")
        await shot(page, "attendance-04-fila-nova")

        # The thread the script draws (its first poll redraws the page) shows markup as text.
        await arrived.locator("a.contato").click()
        await page.wait_for_url(f"{api.base_url}/console/conversas/*")
        await _no_reload_marker(page)
        await expect(page.locator("[data-status]")).to_contain_text(
            "Atualizado", timeout=POLL_DEADLINE_MS
        )
        assert await _still_same_document(page)
        customer = page.locator("li.autor-customer .balao")
        await expect(customer).to_have_text(HOSTILE_TEXT)
        assert await page.locator("main img").count() == 0  # text, never markup

    actions = [(r["action"], r["outcome"], r["actor"]) for r in await audit_rows(db, org)]
    for action in ("conversation.takeover", "conversation.reply", "conversation.release"):
        assert (action, "ok", key[:12]) in actions
    assert ("conversation.reply", "refused", key[:12]) in actions
