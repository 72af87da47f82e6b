"""Consolidation in the console, in a real browser: a draft says which skill it resembles, the
agent page turns consolidation on, a proposal is read (members, uses, diff) and approved, the
skills page shows the absorbed skill and its restore says both may match."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from playwright.async_api import BrowserContext

from api.keys import Role
from consolidation.run import consolidate_org
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.curator_support import NOW
from tests.integration.test_consolidation import EAGER, READ_PRAZOS, _org
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings

HOSTILE_TEXT = "<img src=x onerror=alert(1)>"
SCREENSHOT_FILES = os.environ.get("TEST_SCREENSHOT_FILES")  # a path, to look at


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def test_a_business_sees_close_skills_and_approves_a_merge(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    org = await _org(db, resources.store, mode="off")
    await create_agent(db, org, name="Atendente", system_prompt="Você atende a loja.")
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
        "chave-pix-pagamento",
        "Envia a chave Pix e confirma o pagamento do pedido",
        f"Mande a chave Pix da loja e peça o comprovante do Pix. {HOSTILE_TEXT}",
        ["pix", "chave pix"],
    )
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.ADMIN))

    # The draft names the installed skill it duplicates, before anyone approves it.
    await page.click("header nav a:has-text('Rascunhos')")
    hint = (
        await page.locator("tr", has_text="chave-pix-pagamento").locator(".parecida").inner_text()
    )
    assert hint.startswith("parecida com pagamento-pix (0,")
    assert await page.locator("main img").count() == 0
    await shot(page, "20-rascunho-parecida")

    # Turn consolidation on from the agent page.
    await page.click("header nav a:has-text('Agente')")
    await page.select_option("#consolidation", "review")
    await page.click("form[action='/console/agente/consolidacao'] button")
    await page.wait_for_url(f"{api.base_url}/console/agente?feito=configuracao-salva")
    assert await db.fetchval("select consolidation from organizations where id = $1", org) == (
        "review"
    )

    # The sleep cycle proposes; the business reads the proposal and approves it.
    [made] = (await consolidate_org(db, resources.store, org, EAGER, now=NOW)).proposals
    await db.execute(READ_PRAZOS, org)
    await page.click("header nav a:has-text('Propostas')")
    row = page.locator("tr", has_text="trocar-produto")
    assert "politica-de-troca" in await row.inner_text()
    await shot(page, "21-propostas")
    await row.locator("a").click()
    await page.wait_for_url(f"{api.base_url}/console/propostas/{made.id}")
    members = await page.locator("table").inner_text()
    assert "absorve" in members and "9" in members and "absorvida" in members
    diff = await page.locator("pre.diff").inner_text()
    assert "+## Skills incorporadas" in diff and "+- politica-de-troca:" in diff
    files = await page.locator("ul.arquivos").inner_text()
    assert "references/politica-de-troca/SKILL.md" in files
    assert "prazos.md (novo; lido 3 vez(es), a última " in files
    # The org's agent has no real model: the proposal carries the deterministic body.
    assert (await page.locator("dd.corpo").inner_text()).startswith("o determinístico")
    await shot(page, "22-proposta")
    await page.click("button:has-text('Aprovar a fusão')")
    await page.wait_for_url(f"{api.base_url}/console/propostas?feito=fusao-aprovada")
    assert "Fusão aprovada" in await page.locator(".aviso.ok").inner_text()

    # The skills page: the absorbed ones archived, saying into what; restore says both match.
    await page.click("header nav a:has-text('Skills')")
    # Its row by its name (the umbrella's row lists a file under its name too).
    absorbed = page.locator("tr", has=page.locator("td > strong", has_text="politica-de-troca"))
    assert "absorvida por trocar-produto" in await absorbed.inner_text()
    # Each file's last read; the umbrella's moved reference kept its count.
    umbrella_files = page.locator("ul[aria-label='arquivos de trocar-produto']")
    moved = umbrella_files.locator("li", has_text="references/politica-de-troca/prazos.md")
    assert "lido 3 vez(es), a última " in await moved.inner_text()
    skill_md = umbrella_files.locator("li", has_text="references/troca-de-produto/SKILL.md")
    assert "nunca lido" in await skill_md.inner_text()
    if SCREENSHOT_FILES:
        await page.screenshot(path=SCREENSHOT_FILES, full_page=True)
    await shot(page, "23-skills-absorvidas")
    await absorbed.locator("button:has-text('Restaurar')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills?feito=skill-restaurada")
    assert "as duas podem ser acionadas" in await page.locator(".aviso.ok").inner_text()
    state = await db.fetchval(
        "select state from skill_usage where organization_id = $1 and skill_name = $2",
        org,
        "politica-de-troca",
    )
    assert state == "active"

    # The curator's reports say what consolidation did after each pass, or why it did not.
    for report in (
        {"ran": True, "skipped_reason": None, "links": [{}, {}], "proposals": [{}]},
        {"ran": False, "skipped_reason": "watermark", "links": [], "proposals": []},
    ):
        await db.execute(
            "insert into curator_runs (organization_id, trigger, ran_at, stale_cutoff, "
            "archive_cutoff, transitioned, skipped, consolidation) "
            "values ($1, 'idle', now(), now(), now(), '[]', '[]', $2)",
            org,
            report,
        )
    await page.click("header nav a:has-text('Curador')")
    runs = await page.locator("main").inner_text()
    assert "2 par(es) de skills parecidas, 1 proposta(s) de fusão" in runs
    assert "o agente não escreveu nada desde a última" in runs
