"""Passing a conversation and changing a role from the console, in a real browser: the
holder passes it to an active editor or admin chosen in a list (never a viewer), through
the API's transfer; an admin changes a person's role on Equipe, and the last admin's
demotion is refused beside that person's form."""

from __future__ import annotations

import uuid

import asyncpg
from playwright.async_api import Browser, expect

from api.keys import Role
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.support import create_org, store_inbound
from worker.resources import Resources
from worker.settings import Settings


async def _person(db: asyncpg.Connection, org: uuid.UUID, name: str, role: str) -> uuid.UUID:
    ident = uuid.uuid4()
    await db.execute(
        "insert into people (id, organization_id, name, email, role) values ($1, $2, $3, $4, $5)",
        ident,
        org,
        name,
        f"{name.lower()}-{ident}@loja.example.com",
        role,
    )
    return ident


async def test_the_holder_passes_a_conversation_and_an_admin_changes_roles(
    settings: Settings, db: asyncpg.Connection, resources: Resources, browser: Browser
) -> None:
    org = await create_org(db, "Loja")
    admin = await create_key(db, org, Role.ADMIN)
    ana = await _person(db, org, "Ana", "editor")
    bruno = await _person(db, org, "Bruno", "admin")
    carla = await _person(db, org, "Carla", "viewer")
    conversation, _ = await store_inbound(resources.pool, org, "wamid.t1", "5511977776666")
    await db.execute(
        "update conversations set mode = 'waiting', mode_since = now(), mode_cause = 'customer'"
        " where id = $1",
        conversation,
    )
    context = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    try:
        async with running_api(settings, resources.store) as api:
            page = await context.new_page()
            await sign_in(page, api.base_url, admin)
            await page.goto(f"{api.base_url}/console/conversas/{conversation}")
            await expect(page.locator("form.transferir")).to_have_count(0)  # nobody holds it
            await page.click("button:has-text('Assumir')")
            await page.wait_for_url("**?feito=conversa-assumida")
            options = page.locator("#person_id option")
            await expect(options).to_have_text(["Ana", "Bruno"])  # never the viewer
            await page.select_option("#person_id", label="Ana")
            await shot(page, "transfer-01-escolha")
            await page.click("form.transferir button:has-text('Passar')")
            await page.wait_for_url("**?feito=conversa-passada")
            await expect(page.locator("[data-field=holder]")).to_have_text("Ana")
            held = await db.fetchval(
                "select held_by from conversations where id = $1", conversation
            )
            assert held == f"person:{ana}"

            await page.goto(f"{api.base_url}/console/equipe")
            await page.select_option(f"#papel-{carla}", "editor")
            await page.click(f"form.papel:has(#papel-{carla}) button")
            await page.wait_for_url("**?feito=papel-alterado")
            role = await db.fetchval("select role from people where id = $1", carla)
            assert role == "editor"
            # Bruno is the only admin: demoting him is refused beside his form.
            await page.select_option(f"#papel-{bruno}", "viewer")
            async with page.expect_response(lambda r: r.url.endswith("/papel")) as refused:
                await page.click(f"form.papel:has(#papel-{bruno}) button")
            assert (await refused.value).status == 409
            beside = page.locator(f"form.papel:has(#papel-{bruno}) .campo-erro")
            await expect(beside).to_contain_text("última pessoa administradora")
            await shot(page, "transfer-02-equipe-recusada")
            assert await db.fetchval("select role from people where id = $1", bruno) == "admin"
    finally:
        await context.close()
