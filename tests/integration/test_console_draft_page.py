"""A draft has the same page as an installed skill: its keywords, its files (size and a
download of the draft's own bytes) and the versions of that name, in the real browser; and
the API behind it (GET /v1/drafts/{name} with `keywords`, `probe_keywords`, `files`; GET
/v1/drafts/{name}/files/{path}: the bytes, as an attachment, nosniff; no other org's)."""

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

NEW_FILE = "Trocas em loja física: leve a nota fiscal.\n"


def _author(db: asyncpg.Connection, resources: Resources, org: object) -> SkillAuthor:
    return SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,  # type: ignore[arg-type]
        mode=AuthoringMode.REVIEW,
        limits=AuthoringLimits(),
    )


async def test_a_drafts_page_shows_its_files_and_the_skills_versions(
    settings: Settings, db: asyncpg.Connection, resources: Resources, browser: Browser
) -> None:
    org = await _org(db, resources.store)
    viewer = await create_key(db, org, Role.VIEWER)
    await db.execute("update organizations set agent_authoring = 'review' where id = $1", org)
    author = _author(db, resources, org)
    # A draft of an installed skill (it has references/prazos.md) that adds a file...
    await author.write_file("politica-de-troca", "references/loja-fisica.md", NEW_FILE)
    # ... and a draft of a skill nobody published yet.
    await author.create(
        "aluguel-de-bike", "Aluguel de bicicletas por hora", "Diga o preço por hora.", ["bike"]
    )
    context = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        async with running_api(settings, resources.store) as api:
            answer = await api.get("/v1/drafts/politica-de-troca", viewer)
            assert answer.status == 200, answer.body
            files = {f["path"]: f["size"] for f in answer.body["files"]}
            assert files["references/loja-fisica.md"] == len(NEW_FILE.encode())
            assert "references/prazos.md" in files
            assert answer.body["keywords"]
            download = await api.get(
                "/v1/drafts/politica-de-troca/files/references/loja-fisica.md", viewer
            )
            assert (download.status, download.body) == (200, NEW_FILE)
            missing = await api.get("/v1/drafts/politica-de-troca/files/references/nada.md", viewer)
            assert (missing.status, missing.code) == (404, "skill_file_not_found")

            other = await create_key(db, await _org(db, resources.store), Role.ADMIN)
            theirs = await api.get(
                "/v1/drafts/politica-de-troca/files/references/loja-fisica.md", other
            )
            assert (theirs.status, theirs.code) == (404, "draft_not_found")

            await sign_in(page, api.base_url, viewer)
            await page.goto(f"{api.base_url}/console/rascunhos/politica-de-troca")
            rows = page.locator("table.arquivos-rascunho tbody tr")
            assert await rows.count() == 2
            table = await page.locator("table.arquivos-rascunho").inner_text()
            assert f"{len(NEW_FILE.encode())} bytes" in table
            assert "novo" in table and "igual à versão instalada" in table
            assert "troca" in await page.locator("code.palavras").first.inner_text()
            versions = await page.locator("table.versoes").inner_text()
            assert "rascunho" in versions and "atual" in versions
            assert "base do rascunho" in versions
            link = page.locator("a:has-text('Baixar')").first
            async with page.expect_download() as started:
                await link.click()
            saved = await (await started.value).path()
            assert saved.read_text(encoding="utf-8") in (
                NEW_FILE,
                "Prazo: 30 dias.",
            )
            await shot(page, "rascunho-arquivos-versoes")

            await page.goto(f"{api.base_url}/console/rascunhos/aluguel-de-bike")
            assert "Nenhum arquivo além do SKILL.md" in await page.content()
            text = await page.locator("main").inner_text()
            assert "Skill nova: nenhuma versão publicada ainda" in text
            for raw in ("None", "True", "False", "[]"):
                assert raw not in text
            await shot(page, "rascunho-skill-nova")
    finally:
        await context.close()
