"""Rehearsals in the console, in a real browser: a draft, a proposal and an uninstall show
what the change would do to the org's own customer messages, and a change that loses messages
is published only after its checkbox confirms it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from playwright.async_api import BrowserContext

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.rehearsal_support import pending_draft, pending_proposal
from tests.integration.test_rehearsals import _org
from worker.resources import Resources
from worker.settings import Settings


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def _installed(db: asyncpg.Connection, org: object, name: str) -> bool:
    found = await db.fetchval(
        "select 1 from skill_pointers where organization_id = $1 and name = $2", org, name
    )
    return found is not None


async def test_a_business_sees_the_rehearsal_and_confirms_a_loss(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    org = await _org(db, resources.store)
    await pending_draft(db, org, "pix", ["cartao"])  # pix's two bursts would be lost
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.EDITOR))

    await page.goto(f"{api.base_url}/console/rascunhos/pix")
    box = page.locator("section.ensaio")
    text = await box.inner_text()
    assert "deixaria de reconhecer 2 mensagens" in text, text
    assert "vocês aceitam pix?" in text
    await shot(page, "40-rascunho-ensaio")
    # The checkbox is required: the browser does not send the form without it.
    await page.click("button:has-text('Aprovar e instalar')")
    assert page.url.endswith("/console/rascunhos/pix")
    assert (
        await db.fetchval(
            "select status from skill_drafts where organization_id = $1 and name = 'pix'", org
        )
        == "pending"
    )
    await page.check("label.confirma input")
    await page.click("button:has-text('Aprovar e instalar')")
    await page.wait_for_url(f"{api.base_url}/console/rascunhos?feito=rascunho-aprovado")

    # A proposal that drops troca's keywords.
    proposal = await pending_proposal(db, org, "frete", "troca", ["frete"])
    await page.goto(f"{api.base_url}/console/propostas/{proposal}")
    assert "deixaria de reconhecer 2 mensagens" in await page.locator("section.ensaio").inner_text()
    await shot(page, "41-proposta-ensaio")
    await page.check("label.confirma input")
    await page.click("button:has-text('Aprovar a fusão')")
    await page.wait_for_url(f"{api.base_url}/console/propostas?feito=fusao-aprovada")

    # Uninstalling objecao-preco loses what only its intent model matched.
    await page.goto(f"{api.base_url}/console/skills")
    row = page.locator("tr", has=page.locator("td > strong", has_text="objecao-preco"))
    await row.locator("a:has-text('Desinstalar')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills/objecao-preco/desinstalar")
    text = await page.locator("section.ensaio").inner_text()
    assert "deixaria de reconhecer 1 mensagem" in text and "faz 3x?" in text, text
    await shot(page, "42-desinstalar-ensaio")
    await page.click("button:has-text('Desinstalar')")
    assert await _installed(db, org, "objecao-preco")  # not without the checkbox
    await page.check("label.confirma input")
    await page.click("button:has-text('Desinstalar')")
    await page.wait_for_url(f"{api.base_url}/console/skills?feito=skill-desinstalada")
    assert not await _installed(db, org, "objecao-preco")

    # A change that loses nothing asks no confirmation.
    await pending_draft(db, org, "frete", ["frete", "entrega", "prazo"])
    await page.goto(f"{api.base_url}/console/rascunhos/frete")
    text = await page.locator("section.ensaio").inner_text()
    assert "não deixaria de reconhecer nenhuma mensagem" in text, text
    assert await page.locator("label.confirma").count() == 0
    await shot(page, "43-rascunho-sem-perda")
