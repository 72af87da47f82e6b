"""The agent page's "O modelo aceita imagens" in a real browser: an admin turns it on and
off through the API's own route (PATCH /v1/agents/{id}, audited as agent.update with the
field it changed); a viewer reads it and is offered no form."""

from __future__ import annotations

import asyncpg
from playwright.async_api import expect

from api.keys import Role
from tests.integration.api_support import audit_rows, create_key, running_api
from tests.integration.console_support import launched_chromium, shot, sign_in
from tests.integration.support import create_org
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings


async def test_an_admin_turns_the_agents_vision_on_and_off_and_a_viewer_only_reads_it(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja Fotos")
    agent = await create_agent(db, org, name="Bia", system_prompt="Você é a Bia.")
    admin, viewer = await create_key(db, org, Role.ADMIN), await create_key(db, org, Role.VIEWER)
    async with running_api(settings, resources.store) as api, launched_chromium() as browser:
        page = await (await browser.new_context(locale="pt-BR")).new_page()
        await sign_in(page, api.base_url, admin)
        await page.goto(f"{api.base_url}/console/agente")
        box = page.get_by_label("O modelo aceita imagens")
        await expect(box).not_to_be_checked()
        await box.check()
        await page.locator(f"form[action='/console/agente/{agent.id}/imagens'] button").click()
        await page.wait_for_url(f"{api.base_url}/console/agente?feito=agente-atualizado")
        assert await db.fetchval("select vision from agents where id = $1", agent.id) is True
        await expect(page.get_by_label("O modelo aceita imagens")).to_be_checked()
        await expect(page.locator(".ficha")).to_contain_text("o modelo vê as fotos do cliente")
        await shot(page, "agente-imagens")
        await page.get_by_label("O modelo aceita imagens").uncheck()
        await page.locator(f"form[action='/console/agente/{agent.id}/imagens'] button").click()
        await page.wait_for_url(f"{api.base_url}/console/agente?feito=agente-atualizado")
        assert await db.fetchval("select vision from agents where id = $1", agent.id) is False

        reader = await (await browser.new_context(locale="pt-BR")).new_page()
        await sign_in(reader, api.base_url, viewer)
        await reader.goto(f"{api.base_url}/console/agente")
        await expect(reader.locator(".ficha")).to_contain_text("só a legenda das fotos")
        await expect(reader.get_by_label("O modelo aceita imagens")).to_have_count(0)
    updates = [r for r in await audit_rows(db, org) if r["action"] == "agent.update"]
    assert [(r["actor"], r["detail"]) for r in updates] == [
        (admin[:12], {"agent_id": str(agent.id), "fields": ["vision"]}),
        (admin[:12], {"agent_id": str(agent.id), "fields": ["vision"]}),
    ]
