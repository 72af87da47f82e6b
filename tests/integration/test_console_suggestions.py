"""Sugestões in the console, in a real browser: the navigation counts the groups, the page
shows questions (customers' data removed) beside the team's answers, "Ensinar o agente" from
a conversation's thread makes a draft whose page lists the removed values, one is restored,
and the draft is approved."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from playwright.async_api import BrowserContext

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.support import create_org
from tests.integration.test_suggestions import _thread
from worker.resources import Resources
from worker.settings import Settings

HOSTILE = "<img src=x onerror=alert(1)>"
KEY = "a chave pix é o CNPJ 12.345.678/0001-90"


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_a_business_teaches_its_agent_what_its_team_answered(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext
) -> None:
    org = await create_org(db)
    await _thread(
        db,
        org,
        "5511955550001",
        ("customer", "text", "Oi, vocês aceitam pix? meu nome é Joana"),
        ("agent", "text", "Vou chamar alguém da equipe."),
        ("person", "text", f"Oi Joana! Aceitamos sim, {KEY}."),
    )
    first = await _thread(
        db,
        org,
        "5511955550002",
        ("customer", "text", "aceita pagamento no pix? meu cpf é 123.456.789-09"),
        ("phone", "text", f"Pode pagar no pix sim, {KEY}. Me liga no 11 97777-6666."),
    )
    await _thread(
        db,
        org,
        "5511955550003",
        ("customer", "text", f"vocês abrem sábado? {HOSTILE}"),
        ("person", "text", "Sábado abrimos das 9h às 13h, domingo fechado."),
    )
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.EDITOR))

    link = page.locator("header nav a", has_text="Sugestões")
    assert (await link.locator(".contagem").inner_text()) == "2"
    await link.click()
    await page.wait_for_url(f"{api.base_url}/console/sugestoes")
    pix = page.locator("li.sugestao", has_text="pagamento no pix")
    questions = await pix.locator(".perguntas").inner_text()
    assert "[removido]" in questions and "Joana" not in questions
    assert "123.456.789-09" not in questions
    assert "celular da empresa" in await pix.locator(".respostas").inner_text()
    assert await page.locator("main img").count() == 0  # a customer's markup is text
    await shot(page, "40-sugestoes")

    # From the thread: the owner's phone reply is taught from where it was read.
    await page.goto(f"{api.base_url}/console/conversas/{first}")
    teach = page.locator("li.msg.autor-phone form.ensinar button")
    assert await teach.count() == 1
    assert await page.locator("li.msg.autor-customer form.ensinar").count() == 0
    await shot(page, "40b-conversa-ensinar")
    await teach.click()
    await page.wait_for_url(f"{api.base_url}/console/rascunhos/*?feito=rascunho-criado")
    assert "Rascunho criado" in await page.locator(".aviso.ok").inner_text()
    privacy = page.locator("section.sugestao-privacidade")
    removed = await privacy.locator("table").inner_text()
    assert "97777-6666" in removed and "telefone" in removed and "Joana" in removed
    assert "12.345.678/0001-90" in await privacy.inner_text()  # kept: the business's key
    diff = await page.locator("pre.diff").inner_text()
    assert "97777-6666" not in diff and "12.345.678/0001-90" in diff and "Joana" not in diff
    await shot(page, "41-rascunho-da-sugestao")
    await privacy.locator("tr", has_text="97777-6666").locator("button").click()
    await page.wait_for_url("**feito=valor-devolvido")
    assert "97777-6666" in await page.locator("pre.diff").inner_text()
    await page.click("button:has-text('Aprovar e instalar')")
    await page.wait_for_url(f"{api.base_url}/console/rascunhos?feito=rascunho-aprovado")
    installed = await db.fetchval(
        "select count(*) from skill_pointers where organization_id = $1", org
    )
    assert installed == 1
    await shot(page, "42-aprovado")
