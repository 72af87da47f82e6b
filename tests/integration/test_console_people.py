"""A person's journey in a real browser: invited, opens the link, sets a password, is signed
in, takes a waiting conversation; the page and another signed-in person see "com <name>"."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, expect

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import shot, sign_in, sign_in_person
from tests.integration.support import create_org, store_inbound
from worker.resources import Resources
from worker.settings import Settings

PASSWORD = "minha senha de atendente"


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_an_invited_person_sets_a_password_and_takes_a_conversation_by_name(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, browser: Browser
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    conversation, _ = await store_inbound(resources.pool, org, "wamid.j1", "5511977776666")
    await db.execute(
        "update conversations set mode = 'waiting', mode_since = now(), mode_cause = 'customer'"
        " where id = $1",
        conversation,
    )
    email = "ana.lima@padaria.example.com"
    invited = await api.call(
        "POST",
        "/v1/people/invitations",
        admin,
        json_body={"email": email, "name": "Ana Lima", "role": "editor"},
    )
    assert invited.status == 201
    url = api.base_url + invited.body["url"]

    ana = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    owner = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    try:
        page = await ana.new_page()
        await page.goto(url)
        await expect(page.locator("h1")).to_have_text("Boas-vindas, Ana Lima")
        await shot(page, "people-01-convite")
        await page.fill("#password", PASSWORD)
        await page.fill("#password_again", PASSWORD)
        await page.click("button:has-text('Criar senha e entrar')")
        await page.wait_for_url(f"{api.base_url}/console/atendimento")

        await page.goto(f"{api.base_url}/console/conversas/{conversation}")
        await page.click("button:has-text('Assumir')")
        await page.wait_for_url("**?feito=conversa-assumida")
        await expect(page.locator("[data-field=holder]")).to_have_text("Ana Lima (você)")
        await shot(page, "people-02-assumiu")
        held = await db.fetchval("select held_by from conversations where id = $1", conversation)
        assert held.startswith("person:")

        other = await owner.new_page()
        await sign_in(other, api.base_url, admin)
        await other.goto(f"{api.base_url}/console/conversas/{conversation}")
        assert "com Ana Lima" in await other.locator("[data-state]").inner_text()
        await shot(other, "people-03-outra-pessoa-ve")

        # Signed out, the e-mail and password sign in again.
        await page.click("form.sair button")
        await page.wait_for_url("**/console/entrar?motivo=saiu")
        await shot(page, "people-00-entrar")
        await sign_in_person(page, api.base_url, email, PASSWORD)
        await shot(page, "people-04-entrou")
    finally:
        await ana.close()
        await owner.close()
    actors = {
        r["actor"]
        for r in await db.fetch("select actor from audit_log where organization_id = $1", org)
    }
    assert held in actors  # the takeover's audit actor is the person


async def test_an_admin_invites_from_the_team_page_and_deactivates(
    api: ApiClient, db: asyncpg.Connection, browser: Browser
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN)
    context = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        await sign_in(page, api.base_url, admin)
        await page.click(".topo nav a:has-text('Equipe')")
        await page.fill("#name", "Bruno Dias")
        await page.fill("#email", "bruno@padaria.example.com")
        await page.select_option("#role", "editor")
        await page.click("button:has-text('Convidar')")
        await page.wait_for_url("**/console/equipe?feito=convite-criado")
        link = await page.locator("#novo-convite").inner_text()
        assert link.startswith("/console/convite/")
        await shot(page, "people-05-equipe")
        await page.reload()  # the link is shown once
        await expect(page.locator("#novo-convite")).to_have_count(0)
        await page.click("button:has-text('Desativar')")
        await page.wait_for_url("**/console/equipe?feito=pessoa-desativada")
        assert "desativada (" in await page.locator("table").inner_text()
        # The same e-mail again, as a refused form: a page, in pt-BR.
        await page.fill("#name", "X")
        await page.fill("#email", "nao-e-email")
        await page.evaluate("document.querySelector('#email').type = 'text'")
        await page.click("button:has-text('Convidar')")
        assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "invalid_email"
    finally:
        await context.close()
    active = await db.fetchval(
        "select active from people where email = 'bruno@padaria.example.com'"
    )
    assert active is False
