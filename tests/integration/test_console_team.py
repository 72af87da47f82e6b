"""The team's own words on a conversation's page, in a real browser: a reply's delivery read
from Meta's receipt (falhou, with the pt-BR meaning of 131026), an internal note in the
thread in its own colour, quick replies picked with "/" in the reply box, and the Respostas
rápidas page where a refusal sits beside its field with what was typed kept."""

from __future__ import annotations

import time
import uuid

import asyncpg
from playwright.async_api import BrowserContext, expect

from api.console.delivery_view import META_ERRORS
from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
FRETE = "O frete é grátis acima de R$ 100, e chega em 3 dias úteis."


async def _a_reply_meta_could_not_deliver(settings: Settings) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", "Oi!", sender="5511912345678", timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    await run_burst(settings, model=CountingModel())
    status = {
        "id": "wamid.out.1",
        "status": "failed",
        "timestamp": str(int(time.time())),
        "recipient_id": "5511912345678",
        "errors": [{"code": 131026, "title": "Message undeliverable"}],
    }
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, statuses=[status])))
    assert answer.body["statuses"] == 1


async def test_a_conversation_shows_the_receipt_a_note_and_offers_quick_replies(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Equipe")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    key = await create_key(db, org, Role.EDITOR)
    await _a_reply_meta_could_not_deliver(whatsapp_settings)
    conversation = await db.fetchval("select id from conversations where organization_id = $1", org)

    async with running_api(whatsapp_settings, resources.store) as api:
        for title, text in (("Frete", FRETE), ("Horário", "Abrimos das 9h às 18h.")):
            made = await api.call(
                "POST", "/v1/quick-replies", key, json_body={"title": title, "text": text}
            )
            assert made.status == 201
        page = await context.new_page()
        await sign_in(page, api.base_url, key)
        await page.goto(f"{api.base_url}/console/conversas/{conversation}")
        agent = page.locator("li.autor-agent").last
        await expect(agent.locator(".meta")).to_contain_text(
            f"entrega: falhou — {META_ERRORS[131026]} (código 131026)"
        )
        assert "Message undeliverable" not in await page.locator("main").inner_text()

        # "/" lists the quick replies; letters filter by title, accents aside; Enter uses it.
        await page.locator("#text").press_sequentially("/")
        await expect(page.locator("[data-quick-list] li")).to_have_count(2)
        await page.locator("#text").press_sequentially("fre")
        await expect(page.locator("[data-quick-list] li")).to_have_count(1)
        await shot(page, "team-01-respostas-rapidas")
        await page.locator("#text").press("Enter")
        await expect(page.locator("#text")).to_have_value(FRETE)
        await expect(page.locator("[data-quick-replies]")).to_be_hidden()

        # A blank note is refused beside its field; a note shows in the thread, the team's.
        await page.fill("#note", "   ")
        async with page.expect_response(lambda r: r.url.endswith("/nota")) as refused:
            await page.click("button:has-text('Salvar nota')")
        assert (await refused.value).status == 422
        await expect(page.locator(".nota-interna .campo-erro")).to_contain_text("caracteres")
        await page.fill("#note", "Cliente VIP: oferecer frete grátis")
        await page.click("button:has-text('Salvar nota')")
        await page.wait_for_url("**?feito=nota-salva")
        note = page.locator("li.autor-note")
        await expect(note.locator(".balao")).to_have_text("Cliente VIP: oferecer frete grátis")
        await expect(note.locator(".quem-disse")).to_contain_text("Nota interna")
        # The page's poll redraws the thread with the note still in it.
        await expect(page.locator("[data-status]")).to_contain_text("Atualizado", timeout=5000)
        await expect(page.locator("li.autor-note")).to_have_count(1)
        await shot(page, "team-02-nota")

        # Respostas rápidas: a title taken is refused beside its field, what was typed kept.
        await page.click(".topo nav a:has-text('Respostas rápidas')")
        await page.fill("#qr-title", "FRETE")
        await page.fill("#qr-text", "Outro texto de frete")
        async with page.expect_response(lambda r: r.url.endswith("/respostas-rapidas")) as taken:
            await page.click("form.nova button:has-text('Salvar')")
        assert (await taken.value).status == 409
        await expect(page.locator("form.nova .campo-erro")).to_contain_text("título")
        await expect(page.locator("#qr-title")).to_have_value("FRETE")
        await expect(page.locator("#qr-text")).to_have_value("Outro texto de frete")
        await shot(page, "team-03-respostas-recusada")
        await page.fill("#qr-title", "Troca")
        await page.click("form.nova button:has-text('Salvar')")
        await page.wait_for_url("**?feito=resposta-rapida-salva")
        await expect(page.locator("li.resposta-rapida")).to_have_count(3)
        first = page.locator("li.resposta-rapida").first
        await first.locator("button:has-text('Apagar')").click()
        await page.wait_for_url("**?feito=resposta-rapida-apagada")
        await expect(page.locator("li.resposta-rapida")).to_have_count(2)

        # On a phone (390 px) the new boxes fit the width.
        await page.set_viewport_size({"width": 390, "height": 844})
        await shot(page, "team-04-respostas-390")
        await page.goto(f"{api.base_url}/console/conversas/{conversation}")
        for box in ("#note", "form.nota-interna button"):
            right = await page.locator(box).evaluate("e => e.getBoundingClientRect().right")
            assert right <= 390, box
        # The "/" list opens right under the reply box, which comes first on a phone.
        await page.locator("#text").press_sequentially("/hor")
        reply = await page.locator("form.resposta").first.bounding_box()
        picker = await page.locator("[data-quick-replies]").bounding_box()
        assert reply is not None and picker is not None
        assert 0 <= picker["y"] - (reply["y"] + reply["height"]) <= 40
        await shot(page, "team-06-respostas-390")
        await shot(page, "team-05-conversa-390")
