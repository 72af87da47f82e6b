"""The console's Números page in a real browser: a number is connected only once Meta confirms
the token sees it, its token shows masked, and a number whose token Meta refused says so and
takes a new one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext
from pydantic import SecretStr

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import launched_chromium, shot, sign_in
from tests.integration.support import create_org
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import ACCESS_TOKEN
from webhook.server import start_site
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
TOKEN = "EAAG-token-da-padaria-7777"
NEW_TOKEN = "EAAG-token-da-padaria-8888"


@pytest_asyncio.fixture(loop_scope="session")
async def graph() -> AsyncIterator[FakeGraphApi]:
    fake = FakeGraphApi(ACCESS_TOKEN)
    fake.own(TOKEN, NUMBER, "+55 11 4000-7777")
    fake.own(NEW_TOKEN, "0")  # a valid token of the same business, given the number later
    runner, port = await start_site(fake.app(), "127.0.0.1", 0)
    fake.base_url = f"http://127.0.0.1:{port}/v23.0"
    yield fake
    await runner.cleanup()


@pytest_asyncio.fixture(loop_scope="session")
async def api(
    settings: Settings, resources: Resources, whatsapp_settings: Settings, graph: FakeGraphApi
) -> AsyncIterator[ApiClient]:
    proving = whatsapp_settings.model_copy(
        update={"graph_api_base_url": graph.base_url, "whatsapp_access_token": SecretStr("x")}
    )
    async with running_api(settings, resources.store, prove_with=proving) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def context() -> AsyncIterator[BrowserContext]:
    async with launched_chromium() as browser:
        opened = await _context(browser)
        yield opened
        await opened.close()


async def _context(browser: Browser) -> BrowserContext:
    return await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})


async def test_the_numbers_page_connects_a_proven_number_and_asks_for_a_new_token(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext, graph: FakeGraphApi
) -> None:
    org = await create_org(db, "Padaria")
    admin = await create_key(db, org, Role.ADMIN)
    page = await context.new_page()
    await sign_in(page, api.base_url, admin)
    await page.click("nav a:has-text('Números')")

    await page.fill("#address", NUMBER)
    await page.fill("#access_token", "EAAG-um-token-de-outra-loja")
    await page.click("button:has-text('Conectar')")
    assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "channel_not_verified"
    # Beside the number's field, with what was typed still there.
    refusal = await page.locator("#address + .campo-erro").inner_text()
    assert "phone_number_id" in refusal
    assert await page.locator("#address").input_value() == NUMBER
    assert await page.locator("#access_token").input_value() == "EAAG-um-token-de-outra-loja"
    assert await db.fetchval("select count(*) from channels") == 0

    await page.fill("#access_token", TOKEN)
    await page.fill("#waba_id", "102290129340398")
    await page.click("button:has-text('Conectar')")
    await page.wait_for_url(f"{api.base_url}/console/numeros?feito=numero-conectado")
    row = await page.locator("tbody tr").first.inner_text()
    assert "+55 11 4000-7777" in row and "****7777" in row and "102290129340398" in row
    assert TOKEN not in await page.content()

    await db.execute("update channels set status = 'needs_token'")  # Meta refused it (190)
    await page.reload()
    banner = await page.locator(".aviso.erro").inner_text()
    assert "precisa de um token novo" in banner and "não se" in banner
    await shot(page, "numeros-token")
    graph.own(NEW_TOKEN, NUMBER)
    await page.fill(f"#token-{await _channel_id(db)}", NEW_TOKEN)
    await page.click("button:has-text('Trocar token')")
    await page.wait_for_url(f"{api.base_url}/console/numeros?feito=numero-atualizado")
    assert await page.locator(".aviso.erro").count() == 0
    assert "****8888" in await page.locator("tbody tr").first.inner_text()
    assert await db.fetchval("select status from channels") == "active"


async def _channel_id(db: asyncpg.Connection) -> str:
    return str(await db.fetchval("select id from channels"))
