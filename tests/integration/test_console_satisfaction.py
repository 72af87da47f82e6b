"""Satisfaction in a real browser: an admin turns it on from the Agente page (button texts
that break a rule are refused beside the fields, with what was typed kept), and the page shows
the answers of the last 30 days: the score per person and the recent comments."""

from __future__ import annotations

import asyncpg
from playwright.async_api import BrowserContext, Page, expect

from api.keys import Role
from core.channel_kind import ChannelKind
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.test_satisfaction import NUMBER, _answer_and_release, _cloud, _tap, _text
from tests.integration.webhook_support import connect_number
from tests.integration.whatsapp_fakes import FakeGraphApi
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings


async def _save(page: Page, state: str, buttons: list[str]) -> None:
    await page.select_option("#satisfaction", state)
    for i, text in enumerate(buttons, start=1):
        await page.fill(f"#button_{i}", text)
    await page.click("button:has-text('Salvar pesquisa')")


async def test_turned_on_in_the_console_and_its_answers_shown(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Pesquisa")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    admin = await create_key(db, org, Role.ADMIN, "gerente")
    async with running_api(whatsapp_settings, resources.store) as api:
        page = await context.new_page()
        await sign_in(page, api.base_url, admin)
        await page.goto(f"{api.base_url}/console/agente")
        await expect(page.locator("#satisfacao + p")).to_contain_text("Desligada")
        await expect(page.locator("#button_1")).to_have_value("😀 Ótimo")

        await _save(page, "on", ["Bom", "bom", "Ruim"])
        refusal = page.locator("form[action='/console/agente/satisfacao'] .campo-erro")
        await expect(refusal).to_contain_text("textos diferentes")
        await expect(page.locator("#button_2")).to_have_value("bom")  # what was typed
        await expect(page.locator("#satisfaction")).to_have_value("on")
        await shot(page, "satisfaction-01-recusado")

        await _save(page, "on", ["Amei", "Ok", "Não curti"])
        await page.wait_for_url("**?feito=configuracao-salva")
        await expect(page.locator("#satisfacao + p")).to_contain_text("Ligada")
        await expect(page.locator("#button_3")).to_have_value("Não curti")

        model = CountingModel()
        await _cloud(whatsapp_settings, _text("Oi, meu pedido atrasou"))
        await run_burst(whatsapp_settings, model=model)
        await _answer_and_release(api, admin)
        await run_burst(whatsapp_settings, model=model)
        await _cloud(whatsapp_settings, _tap("satisfacao:otimo", "Amei"))
        await _cloud(whatsapp_settings, _text("A Ana foi muito atenciosa"))
        await run_burst(whatsapp_settings, model=model)

        await page.goto(f"{api.base_url}/console/agente#satisfacao")
        row = page.locator("#satisfacao ~ table tbody tr")
        await expect(row).to_have_count(1)
        await expect(row).to_contain_text("chave")
        await expect(row.locator("td").last).to_have_text("3,00")
        await expect(page.get_by_text("Amei · “A Ana foi muito atenciosa”")).to_be_visible()
        body = await page.locator("main").inner_text()
        assert "None" not in body and "True" not in body
        await shot(page, "satisfaction-02-respostas")

        # The conversation reads as people read it: the options and the tap, no ids.
        [item] = (await api.get("/v1/conversations", admin)).body["items"]
        await page.goto(f"{api.base_url}/console/conversas/{item['id']}")
        thread = page.locator("main")
        await expect(thread).to_contain_text("Opções: Amei · Ok · Não curti")
        await expect(thread).to_contain_text("Escolheu: Amei")
        text = await thread.inner_text()
        assert "satisfacao:" not in text and "[opções" not in text
        assert "interactive" not in text and "sem resposta" not in text
        await shot(page, "satisfaction-03-conversa")

        # The Painel shows the same answers for its period.
        await page.goto(f"{api.base_url}/console/painel")
        section = page.locator("#satisfacao")
        await expect(section.locator("tbody tr").first).to_contain_text("chave")
        await expect(section.locator("tbody tr").first.locator("td").last).to_have_text("3,00")
        await shot(page, "satisfaction-04-painel")
