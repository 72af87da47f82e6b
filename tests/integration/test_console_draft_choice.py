"""The console's draft page when the draft is the same thing as an installed skill: instead of
"Aprovar e instalar", a choice between "Criar mesmo assim" and "Juntar a <skill>"; merging
makes a new version of that skill."""

from __future__ import annotations

import asyncpg
from playwright.async_api import Browser

from api.keys import Role
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.test_consolidation import _org
from worker.resources import Resources
from worker.settings import Settings


async def test_a_near_duplicate_draft_offers_create_or_merge(
    settings: Settings, db: asyncpg.Connection, resources: Resources, browser: Browser
) -> None:
    org = await _org(db, resources.store)
    editor = await create_key(db, org, Role.EDITOR)
    await db.execute("update organizations set agent_authoring = 'review' where id = $1", org)
    author = SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )
    await author.create(
        "pix-de-novo",
        "Envia a chave Pix e confirma o pagamento",
        "Mande a chave Pix da loja e peça o comprovante do Pix.",
        ["pix", "comprovante pix"],
    )
    before = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2",
        org,
        "pagamento-pix",
    )
    context = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        async with running_api(settings, resources.store) as api:
            await sign_in(page, api.base_url, editor)
            await page.goto(f"{api.base_url}/console/rascunhos/pix-de-novo")
            notice = await page.locator("p.mesma").inner_text()
            assert "pagamento-pix" in notice
            assert await page.locator("button:has-text('Criar mesmo assim')").count() == 1
            assert await page.locator("button:has-text('Juntar a pagamento-pix')").count() == 1
            assert await page.locator("button:has-text('Aprovar e instalar')").count() == 0
            await shot(page, "rascunho-mesma-coisa")
            await page.click("button:has-text('Juntar a pagamento-pix')")
            await page.wait_for_url(f"{api.base_url}/console/rascunhos?feito=rascunho-aprovado")
    finally:
        await context.close()
    after = await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2",
        org,
        "pagamento-pix",
    )
    assert after != before
    assert (
        await db.fetchval(
            "select status from skill_drafts where organization_id = $1 and name = 'pix-de-novo'",
            org,
        )
        == "approved"
    )
