"""The skill editor in a real browser: a skill's page (hostile Markdown rendered safely, bidi
controls visible), editing with the keyword preview, a refusal beside its field with nothing
typed lost, publishing, a diff between versions, rolling back, a file uploaded and downloaded,
an edit that lost a race showing both versions, a catalog skill edited from the Marketplace,
and a viewer who only reads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.rehearsal_support import conversation, customer_messages
from tests.integration.support import create_org, publish
from worker.resources import Resources
from worker.settings import Settings

HOSTILE_BODY = (
    "## Trocas\n\nAté **7 dias**. <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n"
    "[site](https://loja.example/trocas) [mal](javascript:alert(1)) ![foto](https://x.example/a.png)"
    "\n\nPreço: \u202e01 RS\n"
)


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


def _edit(base: str | None, body: str, keywords: str = "troca, trocar") -> dict[str, object]:
    return {
        "base_version_id": base,
        "description": "Política de trocas da loja.",
        "body": body,
        "keywords": keywords,
        "probe_keywords": "",
    }


async def _preview(page: Page, sample: str) -> str:
    row = page.locator("[data-preview-list] li", has_text=sample)
    return (await row.locator(".marca-previa").inner_text()).strip()


async def test_edit_publish_compare_and_roll_back_a_skill(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR, name="Ana")
    made = await api.call("PUT", "/v1/skills/trocas", key, json_body=_edit(None, HOSTILE_BODY))
    first = made.body["version_id"]
    page = await context.new_page()
    alerts: list[str] = []
    page.on("dialog", lambda d: alerts.append(d.message))
    await sign_in(page, api.base_url, key)

    # The skills list links each skill to its page.
    await page.click("header nav a:has-text('Skills')")
    await page.click("td a:has-text('trocas')")
    await page.wait_for_url(f"{api.base_url}/console/skills/trocas")
    article = page.locator("article.corpo-skill")
    assert await article.locator("h2").inner_text() == "Trocas"
    assert await article.locator("strong").inner_text() == "7 dias"
    assert await page.locator("main img, main script, main iframe").count() == 0
    hrefs = [await a.get_attribute("href") for a in await article.locator("a").all()]
    assert hrefs == ["https://loja.example/trocas", "https://x.example/a.png"]
    text = await article.inner_text()
    assert "<script>alert(1)</script>" in text and "[mal](javascript:alert(1))" in text
    assert "<U+202E>01 RS" in text and "\u202e" not in text
    assert "por chave “Ana”" in await page.locator("dl.ficha").inner_text()
    await shot(page, "40-skill")

    # Edit: the preview follows the keywords as they are typed, with the matcher's own code.
    await page.click("a:has-text('Editar')")
    await page.wait_for_url(f"{api.base_url}/console/skills/trocas/editar")
    sample = "Quero trocar um produto que comprei semana passada"
    # (Waited for with locators: the page's CSP forbids evaluating a string as a script.)
    await page.locator("[data-preview-list] .marca-previa").first.wait_for()
    assert await _preview(page, sample) == "reconhece"
    assert await _preview(page, "Oi, vocês aceitam pix?") == "não reconhece"
    await page.fill("#keywords", "troca, trocar, pix")
    await page.locator("[data-preview-list] li.casa.skill", has_text="aceitam pix").wait_for()
    await page.fill("[data-preview='teste']", "posso devolver?")
    await page.locator("[data-preview-list] li", has_text="posso devolver?").wait_for()
    await shot(page, "41-editar-previa")

    # Rehearsed before it goes live: a customer's real question about pix would now be read.
    asked = await conversation(db, org, "5511988887777")
    yesterday = datetime.now(UTC) - timedelta(days=1)
    await customer_messages(db, org, asked, ["Oi, vocês aceitam pix?"], yesterday)
    await page.click("button:has-text('Ensaiar')")
    box = page.locator("section.ensaio")
    assert "reconheceria 1 mensagem nova" in await box.inner_text()
    assert "Oi, vocês aceitam pix?" in await box.locator("table").inner_text()
    assert await page.input_value("#keywords") == "troca, trocar, pix"  # nothing typed lost
    await shot(page, "41b-editar-ensaio")

    # A refusal shows beside its field; everything typed is still there.
    new_body = "## Trocas\n\nAté **30 dias** com a nota fiscal."
    await page.fill("#description", "Trocas <em até 30 dias>")
    await page.fill("#body", new_body)
    await page.click("button:has-text('Publicar')")
    error = page.locator("#erro-description")
    assert "description" in await error.inner_text()
    assert await page.locator("#description").get_attribute("aria-invalid") == "true"
    assert await page.input_value("#body") == new_body
    assert await page.input_value("#keywords") == "troca, trocar, pix"
    await shot(page, "42-recusa-no-campo")
    await page.fill("#description", "Trocas em até 30 dias.")
    await page.click("button:has-text('Publicar')")
    await page.wait_for_url(f"{api.base_url}/console/skills/trocas?feito=versao-publicada")
    assert "Versão publicada" in await page.locator(".aviso.ok").inner_text()
    assert "30 dias" in await page.locator("article.corpo-skill").inner_text()

    # Versions: who and when; the diff from the current back to the first.
    rows = page.locator("table.versoes tbody tr")
    assert await rows.count() == 2
    await rows.nth(1).locator("a:has-text('Comparar com a atual')").click()
    diff = await page.locator("pre.diff").inner_text()
    assert "-Até **30 dias** com a nota fiscal." in diff and "+Preço: <U+202E>01 RS" in diff
    await shot(page, "43-versoes-diff")

    # Back to the first version.
    await rows.nth(1).locator("button:has-text('Voltar para esta versão')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills/trocas?feito=versao-restaurada")
    assert "7 dias" in await page.locator("article.corpo-skill").inner_text()
    pointer = await db.fetchval(
        "select version_id::text from skill_pointers where organization_id = $1", org
    )
    assert pointer == first
    await shot(page, "44-voltou")
    assert alerts == []


async def test_files_a_lost_race_and_a_catalog_skill(
    api: ApiClient, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.EDITOR)
    made = await api.call(
        "PUT", "/v1/skills/pix", key, json_body=_edit(None, "Aceitamos Pix.", "pix")
    )
    page = await context.new_page()
    await sign_in(page, api.base_url, key)
    await page.goto(f"{api.base_url}/console/skills/pix")

    # A file uploaded by form, listed with its size and reads, downloaded as an attachment.
    await page.set_input_files(
        "form.arquivo-novo input[type=file]",
        files=[{"name": "chave.md", "mimeType": "text/markdown", "buffer": b"Chave: loja@x.com"}],
    )
    await page.click("button:has-text('Adicionar ou substituir')")
    await page.wait_for_url(f"{api.base_url}/console/skills/pix?feito=arquivo-salvo")
    row = page.locator("tr", has_text="references/chave.md")
    assert "17 bytes" in await row.inner_text()
    answer = await page.request.get(
        f"{api.base_url}/console/skills/pix/arquivos/references/chave.md"
    )
    assert answer.status == 200 and await answer.body() == b"Chave: loja@x.com"
    assert answer.headers["content-disposition"] == 'attachment; filename="chave.md"'
    assert answer.headers["x-content-type-options"] == "nosniff"
    # A binary file in references/ is refused beside the file form; nothing is written.
    await page.set_input_files(
        "form.arquivo-novo input[type=file]",
        files=[{"name": "foto.md", "mimeType": "image/jpeg", "buffer": b"\xff\xd8\xff\xe0"}],
    )
    await page.click("button:has-text('Adicionar ou substituir')")
    assert "UTF-8" in await page.locator("p.campo-erro").inner_text()
    await shot(page, "45-arquivo-recusado")
    await page.goto(f"{api.base_url}/console/skills/pix")
    await row.locator("button:has-text('Remover')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills/pix?feito=arquivo-removido")
    assert await page.locator("tr", has_text="references/chave.md").count() == 0

    # Someone publishes while the form is open: both versions shown, nothing typed lost.
    await page.goto(f"{api.base_url}/console/skills/pix/editar")
    current = (await api.get("/v1/skills/pix", key)).body["version_id"]
    await api.call(
        "PUT", "/v1/skills/pix", key, json_body=_edit(current, "Pix: chave CNPJ.", "pix")
    )
    await page.fill("#body", "Pix com a chave de e-mail.")
    await page.click("button:has-text('Publicar')")
    moved = page.locator("section.movida")
    assert "Pix: chave CNPJ." in await moved.inner_text()
    assert "Pix com a chave de e-mail." in await moved.inner_text()
    assert await page.input_value("#body") == "Pix com a chave de e-mail."
    assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "skill_base_moved"
    await shot(page, "46-versao-mudou")
    await page.click("button:has-text('Publicar')")  # now a decision, from the current one
    await page.wait_for_url(f"{api.base_url}/console/skills/pix?feito=versao-publicada")
    assert made.status == 201

    # A catalog skill not installed: "Editar" on the Marketplace installs and edits at once.
    name = "agenda-catalogo"
    await publish(db, resources.store, None, name, keywords=["agenda"], created_by="platform")
    await page.click("header nav a:has-text('Marketplace')")
    await page.locator("li.cartao", has_text=name).locator("a:has-text('Editar')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills/{name}/editar")
    assert await page.input_value("#keywords") == "agenda"
    await page.fill("#body", "Agendamos de segunda a sábado.")
    await page.click("button:has-text('Publicar')")
    await page.wait_for_url(f"{api.base_url}/console/skills/{name}?feito=versao-publicada")
    vias = await page.locator("table.versoes tbody tr").all_inner_texts()
    assert [("editor" in v, "catálogo" in v) for v in vias] == [(True, False), (False, True)]
    await shot(page, "47-catalogo-editado")


async def test_a_new_skill_and_a_viewer_who_only_reads(
    api: ApiClient, db: asyncpg.Connection, browser: Browser
) -> None:
    org = await create_org(db)
    editor = await create_key(db, org, Role.EDITOR)
    viewer = await create_key(db, org, Role.VIEWER)
    context = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
    page = await context.new_page()
    await sign_in(page, api.base_url, editor)
    await page.goto(f"{api.base_url}/console/skills")
    await page.click("a:has-text('Nova skill')")
    await page.fill("#name", "Horário Loja")
    await page.fill("#description", "Horário de funcionamento.")
    await page.fill("#keywords", "horário, abre")
    await page.fill("#body", "Abrimos às 9h.")
    await page.click("button:has-text('Publicar')")
    assert "name" in await page.locator("#erro-name").inner_text()
    assert await page.input_value("#body") == "Abrimos às 9h."
    await shot(page, "48-nova-recusada")
    await page.fill("#name", "horario-loja")
    await page.click("button:has-text('Publicar')")
    await page.wait_for_url(f"{api.base_url}/console/skills/horario-loja?feito=versao-publicada")
    await context.close()

    context = await browser.new_context(locale="pt-BR")
    page = await context.new_page()
    await sign_in(page, api.base_url, viewer)
    # The keyword preview reads the matcher's own refusal of a malformed keyword, and bounds
    # what it is given.
    preview = f"{api.base_url}/console/palavras-chave"
    answer = await page.request.get(preview, params={"keywords": "pix +", "teste": "pix"})
    assert answer.status == 200 and (await answer.json())["error"]
    huge = await page.request.get(preview, params={"keywords": "a," * 1_500, "teste": "b" * 1_000})
    body = await huge.json()
    assert huge.status == 200 and len(body["samples"][-1]["text"]) == 500
    hit = await page.request.get(preview, params={"keywords": "sábado", "probe_keywords": "loja"})
    marks = {s["text"]: s["match"] for s in (await hit.json())["samples"]}
    assert marks["Qual o horário de funcionamento no sábado?"] == "skill"
    assert marks["Onde fica a loja?"] == "probe"
    assert marks["Meu pedido ainda não chegou"] is None
    await page.goto(f"{api.base_url}/console/skills/horario-loja")
    assert "Abrimos às 9h." in await page.locator("article.corpo-skill").inner_text()
    assert await page.locator("a:has-text('Editar'), button:has-text('Voltar')").count() == 0
    csrf = await page.locator("form.sair input[name=csrf]").get_attribute("value")
    answer = await page.request.post(
        f"{api.base_url}/console/skills/horario-loja/editar",
        form={"csrf": csrf or "", "base_version_id": "", "description": "x", "body": "y"},
    )
    assert answer.status == 403
    await context.close()
