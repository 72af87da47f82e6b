"""The console in a real browser: sign in with a key, install from the marketplace, a hostile
upload refused on the page, a draft read as a diff and approved, and the next turn using it;
sessions end with their key, forms need their CSRF token, a viewer cannot decide."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext

from api.app import build_app
from api.keys import Role
from core.tenancy import org_connection
from skills.authoring import AuthoringLimits, SkillAuthor
from skills.draft_queries import AuthoringMode
from skills.usage import UsageStore
from tests.integration.api_support import (
    ApiClient,
    audit_rows,
    create_key,
    org_snapshot,
    running_api,
)
from tests.integration.console_support import csrf_of, shot, sign_in
from tests.integration.support import create_org, enqueue, payload, publish, result_of, run_burst
from tests.package_builders import skill_md_text, zip_files
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings

HOSTILE_TEXT = "<img src=x onerror=alert(1)>"


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


def _author(
    db: asyncpg.Connection,
    resources: Resources,
    org: uuid.UUID,
    mode: AuthoringMode = AuthoringMode.REVIEW,
) -> SkillAuthor:
    return SkillAuthor(
        db,
        resources.store,
        UsageStore(resources.turn_deps.clock),
        org,
        mode=mode,
        limits=AuthoringLimits(),
    )


async def _pointer(db: asyncpg.Connection, org: uuid.UUID, name: str) -> uuid.UUID | None:
    return await db.fetchval(
        "select version_id from skill_pointers where organization_id = $1 and name = $2", org, name
    )


async def _audit(db: asyncpg.Connection, org: uuid.UUID) -> list[tuple[str, str, str | None]]:
    return [(r["action"], r["outcome"], r["skill_name"]) for r in await audit_rows(db, org)]


async def test_a_business_installs_refuses_a_hostile_zip_and_approves_a_draft(
    settings: Settings,
    api: ApiClient,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja do Zé")
    await publish(
        db,
        resources.store,
        None,
        "frete",
        keywords=["frete"],
        description="Prazos e valores de entrega",
        created_by="platform",
    )
    key = await create_key(db, org, Role.EDITOR, "painel")
    page = await context.new_page()

    await page.goto(f"{api.base_url}/console/skills")  # no session: to the sign-in page
    assert page.url.startswith(f"{api.base_url}/console/entrar")
    await shot(page, "01-entrar")
    await sign_in(page, api.base_url, key)
    [cookie] = [c for c in await context.cookies() if c["name"] == "skillet_sessao"]
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Lax", "/console")
    stored = await db.fetchval("select session_hash from console_sessions")
    assert cookie["value"].encode() not in stored and len(stored) == 32

    # Marketplace -> install: the org gets its fork, audited with the key's prefix.
    await page.click("a:has-text('Marketplace')")
    await shot(page, "02-marketplace")
    card = page.locator("li.cartao", has_text="frete")
    assert "Prazos e valores de entrega" in await card.inner_text()
    await card.locator("button:has-text('Instalar')").click()
    await page.wait_for_url(f"{api.base_url}/console/skills?feito=skill-instalada")
    assert "Skill instalada" in await page.locator(".aviso.ok").inner_text()
    row = page.locator("tr", has_text="frete")
    assert "catálogo" in await row.inner_text()
    await shot(page, "03-skills")
    installed = await _pointer(db, org, "frete")
    assert installed is not None

    # A path-traversal zip: refused by the parser, its code and message on the page.
    before = await org_snapshot(db, org)
    slip = zip_files({"SKILL.md": skill_md_text("frete"), "../../etc/frete.md": "pwned"})
    await page.click("a:has-text('Enviar .zip')")
    await page.set_input_files(
        "#file", files=[{"name": "frete.zip", "mimeType": "application/zip", "buffer": slip}]
    )
    async with page.expect_response(f"{api.base_url}/console/enviar") as sent:
        await page.click("button:has-text('Enviar')")
    assert (await sent.value).status == 422
    alert = await page.locator(".aviso.erro").inner_text()
    assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "skill_unsafe_path"
    assert "../../etc/frete.md" in alert
    await shot(page, "04-envio-recusado")
    assert await org_snapshot(db, org) == before

    # The agent writes a draft (review mode); the business reads its diff and approves it.
    drafted = await _author(db, resources, org).create(
        "troca",
        "Como trocar um produto",
        f"Peça o número do pedido e uma foto do produto. {HOSTILE_TEXT}",
        ["troca"],
    )
    await page.click("a:has-text('Rascunhos')")
    await page.click("a:has-text('troca')")
    await page.wait_for_url(f"{api.base_url}/console/rascunhos/troca")
    added = page.locator("pre.diff .added")
    assert await added.count() >= 3
    diff_text = await page.locator("pre.diff").inner_text()
    assert "+++ rascunho/SKILL.md" in diff_text and "+Peça o número do pedido" in diff_text
    assert HOSTILE_TEXT in diff_text  # shown as text ...
    assert await page.locator("main img").count() == 0  # ... never as markup
    await shot(page, "05-rascunho")
    await page.click("button:has-text('Aprovar e instalar')")
    await page.wait_for_url(f"{api.base_url}/console/rascunhos?feito=rascunho-aprovado")
    assert await _pointer(db, org, "troca") == drafted.version_id
    assert await _audit(db, org) == [
        ("skill.install", "ok", "frete"),
        ("skill.import", "refused", None),
        ("draft.approve", "ok", "troca"),
    ]
    assert {r["actor"] for r in await audit_rows(db, org)} == {key[:12]}

    # The next inbound turn matches the approved skill.
    [job] = await enqueue(settings, payload(org, "console-m1", "quero fazer uma troca"))
    await run_burst(settings)
    assert [m["name"] for m in (await result_of(settings, job))["matched"]] == ["troca"]

    await page.click("header nav a:has-text('Skills')")
    usage = page.locator("tr", has_text="troca").locator("td.num")
    # Used once in 30 days; no procura, none cut, no negative reaction.
    assert await usage.all_inner_texts() == ["1", "0", "0", "0"]
    await page.click("a:has-text('Auditoria')")
    await shot(page, "06-auditoria")
    await page.click("a:has-text('Conversas')")
    await page.locator("td a").first.click()
    messages = await page.locator("ol.mensagens").inner_text()
    assert "quero fazer uma troca" in messages and HOSTILE_TEXT in messages
    assert await page.locator("main img").count() == 0
    await shot(page, "07-conversa")


async def test_a_key_made_on_the_keys_page_signs_in_and_its_revocation_ends_the_session(
    api: ApiClient,
    db: asyncpg.Connection,
    context: BrowserContext,
    browser: Browser,
) -> None:
    org = await create_org(db)
    admin = await create_key(db, org, Role.ADMIN, "dono")
    page = await context.new_page()
    await sign_in(page, api.base_url, admin)

    await page.click("a:has-text('Chaves')")
    await page.fill("#name", "celular-da-loja")
    await page.select_option("#role", "editor")
    await page.click("button:has-text('Criar chave')")
    await page.wait_for_url(f"{api.base_url}/console/chaves?feito=chave-criada")  # no key in a URL
    made = (await page.locator("#nova-chave").inner_text()).strip()
    assert made.startswith("skt_") and len(made) == 56
    await shot(page, "08-chaves")
    await page.reload()  # shown once; and a reload does not create another key
    assert made not in await page.content() and made[:12] in await page.content()
    assert await page.locator("tbody tr").count() == 2
    assert "skillet_chave_nova" not in {c["name"] for c in await context.cookies()}

    other = await browser.new_context()
    try:
        phone = await other.new_page()
        await sign_in(phone, api.base_url, made)
        assert "edição" in await phone.locator(".quem").inner_text()
        assert await phone.locator("nav a:has-text('Chaves')").count() == 0  # admin only

        row = page.locator("tr", has_text=made[:12])
        await row.locator("button:has-text('Revogar')").click()
        await page.wait_for_url(f"{api.base_url}/console/chaves?feito=chave-revogada")
        assert "revogada" in await page.locator("tr", has_text=made[:12]).inner_text()

        await phone.reload()  # the next page load of the revoked key's session
        assert phone.url == f"{api.base_url}/console/entrar?motivo=sessao"
        assert "Sua sessão terminou" in await phone.locator(".aviso.ok").inner_text()
        answer = await phone.request.get(f"{api.base_url}/console/skills", max_redirects=0)
        assert answer.status == 303
    finally:
        await other.close()
    agent = await create_agent(db, org, name="Atendente", system_prompt="Seja gentil.")
    await page.click("a:has-text('Agente')")
    await page.fill(f"#prompt-{agent.id}", "Seja gentil e breve.")
    await page.click("button:has-text('Salvar persona')")
    await page.wait_for_url(f"{api.base_url}/console/agente?feito=agente-atualizado")
    await page.select_option(f"#provider-{agent.id}", "anthropic")  # without a model id
    async with page.expect_response(f"{api.base_url}/console/agente/{agent.id}/modelo") as sent:
        await page.click("button:has-text('Salvar modelo')")
    assert (await sent.value).status == 422
    assert await page.locator(".aviso.erro").get_attribute("data-codigo") == "invalid_model"
    await shot(page, "14-agente-admin")
    saved = await db.fetchrow(
        "select system_prompt, model_provider from agents where id = $1", agent.id
    )
    assert (saved["system_prompt"], saved["model_provider"]) == ("Seja gentil e breve.", None)
    await page.select_option("#agent_authoring", "auto")
    await page.click("form[action='/console/agente/autoria'] button")
    await page.wait_for_url(f"{api.base_url}/console/agente?feito=configuracao-salva")
    assert await db.fetchval("select agent_authoring from organizations where id = $1", org) == (
        "auto"
    )
    ack_box = page.locator(f"#ack-{agent.id}")
    assert "Vou chamar uma pessoa" in (await ack_box.get_attribute("placeholder") or "")
    await ack_box.fill("Já vou te passar para a Ana, da loja.")
    await page.fill(f"#notice-{agent.id}", "A Ana já vem; obrigado por esperar.")
    await page.click("button:has-text('Salvar avisos')")
    await page.wait_for_url(f"{api.base_url}/console/agente?feito=agente-atualizado")
    texts = await db.fetchrow(
        "select handoff_ack, handoff_wait_notice from agents where id = $1", agent.id
    )
    assert tuple(texts) == (
        "Já vou te passar para a Ana, da loja.",
        "A Ana já vem; obrigado por esperar.",
    )
    assert [(r["action"], r["actor"], r["detail"]) for r in await audit_rows(db, org)] == [
        ("api_key.create", admin[:12], {"prefix": made[:12], "role": "editor"}),
        ("api_key.revoke", admin[:12], {"prefix": made[:12]}),
        (
            "agent.update",
            admin[:12],
            {"agent_id": str(agent.id), "fields": ["name", "system_prompt"]},
        ),
        ("agent.update", admin[:12], {"code": "invalid_model"}),
        ("settings.agent_authoring", admin[:12], {"from": "review", "to": "auto"}),
        (
            "agent.update",
            admin[:12],
            {"agent_id": str(agent.id), "fields": ["handoff_ack", "handoff_wait_notice"]},
        ),
    ]


async def test_sessions_are_hashed_org_scoped_and_the_api_role_cannot_change_them(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext
) -> None:
    org, other = await create_org(db, "A"), await create_org(db, "B")
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))
    [cookie] = [c for c in await context.cookies() if c["name"] == "skillet_sessao"]
    assert hashlib.sha256(cookie["value"].encode()).digest() == await db.fetchval(
        "select session_hash from console_sessions where organization_id = $1", org
    )
    pool = api.deps.pool  # skillet_api, as `skillet api` runs
    async with pool.acquire() as conn:  # no org bound: nothing
        assert await conn.fetchval("select count(*) from console_sessions") == 0
    async with org_connection(pool, other) as conn:
        assert await conn.fetchval("select count(*) from console_sessions") == 0
        assert await conn.execute("delete from console_sessions") == "DELETE 0"
    async with org_connection(pool, org) as conn:
        assert await conn.fetchval("select count(*) from console_sessions") == 1
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute("update console_sessions set expires_at = now() + interval '1 year'")
    definer = await db.fetchrow(
        "select prosecdef, proconfig from pg_proc where proname = 'skillet_console_session_lookup'"
    )
    assert definer["prosecdef"] and "search_path=public, pg_temp" in definer["proconfig"]
    # An expired session opens nothing, even with its key live.
    await db.execute("update console_sessions set expires_at = now() - interval '1 second'")
    await page.reload()
    assert page.url == f"{api.base_url}/console/entrar?motivo=sessao"


async def test_a_post_without_its_csrf_token_is_refused_and_changes_nothing(
    api: ApiClient,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
    browser: Browser,
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, None, "frete", keywords=["frete"], created_by="platform")
    key = await create_key(db, org, Role.EDITOR)
    page = await context.new_page()
    await sign_in(page, api.base_url, key)
    install = f"{api.base_url}/console/marketplace/frete/instalar"
    before = await org_snapshot(db, org)

    for form in ({}, {"csrf": ""}, {"csrf": "0" * 64}):
        answer = await page.request.post(install, form=form, max_redirects=0)
        assert answer.status == 403, form
        assert "csrf_invalido" in await answer.text()
    assert await org_snapshot(db, org) == before
    assert await audit_rows(db, org) == []

    # The page's own token passes: the check above refused the token, not the request.
    answer = await page.request.post(install, form={"csrf": await csrf_of(page)}, max_redirects=0)
    assert (answer.status, answer.headers["location"]) == (
        303,
        "/console/skills?feito=skill-instalada",
    )
    assert await _pointer(db, org, "frete") is not None

    # Sign-in has no session yet: its form carries a token of its own (double submit).
    stranger = await browser.new_context()
    try:
        sessions = await db.fetchval("select count(*) from console_sessions")
        forged = await stranger.request.post(
            f"{api.base_url}/console/entrar", form={"key": key}, max_redirects=0
        )
        assert forged.status == 403
        assert await db.fetchval("select count(*) from console_sessions") == sessions
    finally:
        await stranger.close()

    # Signing out ends the session: the cookie no longer opens a page.
    await page.click("button:has-text('Sair')")
    await page.wait_for_url(f"{api.base_url}/console/entrar?motivo=saiu")
    assert await db.fetchval("select count(*) from console_sessions") == 0


async def test_a_viewer_reads_a_draft_but_cannot_approve_it(
    api: ApiClient,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db)
    # An override that would show "Troca em 7 dias" for a line holding "Troca em said 7".
    body = "Peça o pedido.\nTroca em \u202esaid 7\u202c dias."
    await _author(db, resources, org).create("troca", "Trocas", body, ["troca"])
    viewer = await create_key(db, org, Role.VIEWER)
    page = await context.new_page()
    await sign_in(page, api.base_url, viewer)
    nav = await page.locator("header nav").inner_text()
    assert "Rascunhos" in nav and "Chaves" not in nav and "Enviar" not in nav

    await page.goto(f"{api.base_url}/console/rascunhos/troca")
    shown = await page.locator("pre.diff").inner_text()
    assert "+Peça o pedido." in shown
    assert "+Troca em <U+202E>said 7<U+202C> dias." in shown  # written out, not applied
    assert "\u202e" not in await page.content()
    assert await page.locator("button:has-text('Aprovar')").count() == 0
    assert await page.locator("button:has-text('Recusar')").count() == 0
    await shot(page, "09-rascunho-leitura")

    approve = f"{api.base_url}/console/rascunhos/troca/aprovar"
    answer = await page.request.post(approve, form={"csrf": await csrf_of(page)}, max_redirects=0)
    assert answer.status == 403
    assert "forbidden" in await answer.text()
    assert await _pointer(db, org, "troca") is None
    assert await db.fetchval("select status from skill_drafts where name = 'troca'") == "pending"
    # The same refusal row the API writes for the same key.
    assert (await api.call("POST", "/v1/drafts/troca/approve", viewer)).status == 403
    console_row, api_row = await audit_rows(db, org)
    assert console_row == api_row
    assert (console_row["action"], console_row["outcome"], console_row["detail"]) == (
        "draft.approve",
        "refused",
        {"code": "forbidden"},
    )


async def test_the_reading_pages_show_the_orgs_agent_curator_reports_and_drafts(
    api: ApiClient,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Padaria")
    await create_agent(
        db, org, name="Atendente", system_prompt="Você é a atendente da padaria. <b>Seja breve</b>."
    )
    await db.execute(
        "insert into curator_runs (organization_id, trigger, ran_at, stale_cutoff, "
        "archive_cutoff, transitioned, skipped) values ($1, 'manual', now(), now(), now(), "
        """'[{"name": "promo-natal", "from": "stale", "to": "archived"}]', '[]')""",
        org,
    )
    installed = _author(db, resources, org, AuthoringMode.AUTO)
    await installed.create("bolo", "Encomendas de bolo", "Pergunte o sabor.", ["bolo"])
    await _author(db, resources, org).patch(
        "bolo", "Pergunte o sabor.", "Pergunte o sabor e o peso."
    )
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))

    await page.click("a:has-text('Agente')")
    persona = await page.locator("pre.texto").inner_text()
    assert "<b>Seja breve</b>" in persona and await page.locator("main b").count() == 0
    assert "Revisão" in await page.locator("main").inner_text()
    assert await page.locator("form[action='/console/agente/autoria']").count() == 0  # admin
    await shot(page, "10-agente")
    await page.click("a:has-text('Curador')")
    assert "promo-natal: parada → arquivada" in await page.locator("main").inner_text()
    await shot(page, "11-curador")
    await page.click("a:has-text('Rascunhos')")
    assert "Encomendas de bolo" in await page.locator("tr", has_text="bolo").inner_text()
    await shot(page, "12-rascunhos")
    await page.click("a:has-text('bolo')")
    assert await page.locator("pre.diff .removed").all_inner_texts() == ["-Pergunte o sabor."]
    assert await page.locator("pre.diff .added").all_inner_texts() == [
        "+Pergunte o sabor e o peso."
    ]
    await shot(page, "12b-rascunho-mudanca")
    missing = await page.goto(f"{api.base_url}/console/conversas/{uuid.uuid4()}")
    assert missing is not None and missing.status == 404
    assert (
        await page.locator(".aviso.erro").get_attribute("data-codigo") == "conversation_not_found"
    )
    await shot(page, "13-nao-encontrada")


async def test_the_skills_page_counts_uses_and_says_which_the_classifier_made(
    api: ApiClient,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Ótica Visão")
    for name in ("objecao-preco", "frete"):
        await publish(db, resources.store, org, name, keywords=[name])
    # 30-day counts: keywords injected 4, the catalog's classifier 3 more; frete by keywords.
    await db.execute(
        "insert into skill_activation_daily (organization_id, skill_name, day, hard_count, "
        "probe_count, capped_count, intent_count) values "
        "($1, 'objecao-preco', (now() at time zone 'UTC')::date, 4, 1, 0, 3), "
        "($1, 'frete', (now() at time zone 'UTC')::date, 2, 0, 0, 0)",
        org,
    )
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))
    await page.click(".topo nav a:has-text('Skills')")  # the console opens on Atendimento

    cells = page.locator("tr", has_text="objecao-preco").locator("td.num")
    assert await cells.all_inner_texts() == ["7\n3 pelo classificador", "1", "0", "0"]
    frete = page.locator("tr", has_text="frete").locator("td.num")
    assert await frete.all_inner_texts() == ["2", "0", "0", "0"]
    assert "pelo classificador" in await page.locator("p.intro").inner_text()
    await shot(page, "14-skills-classificador")


async def test_only_the_sign_in_page_and_static_files_answer_without_a_session(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    before = await org_snapshot(db, org)
    open_paths = {"/console/entrar", "/console", "/console/"}
    walked = 0
    for route in build_app(api.deps).router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("formatter") or info.get("path") or ""
        if not path.startswith("/console") or route.method == "HEAD" or path in open_paths:
            continue
        if path.startswith("/console/convite/"):  # an invitation's link: test_people.py
            continue
        if "prefix" in info:  # the static directory
            continue
        url = path.replace("{name}", "frete").replace("{prefix}", "skt_aaaaaaaa")
        url = url.replace("{id}", str(uuid.uuid4())).replace("{followup_id}", str(uuid.uuid4()))
        url = url.replace("{message_id}", str(uuid.uuid4()))
        url = url.replace("{kind}", "cloud_api").replace("{address}", "106540352242922")
        async with api.http.request(
            route.method, api.base_url + url, data={"csrf": "x"}, allow_redirects=False
        ) as answer:
            assert (answer.status, answer.headers.get("Location")) == (
                303,
                "/console/entrar?motivo=entrar",
            ), url
        walked += 1
    assert walked >= 20
    assert await org_snapshot(db, org) == before
    async with api.http.get(f"{api.base_url}/console/static/console.css") as css:
        assert css.status == 200 and "--marca" in await css.text()
    async with api.http.get(f"{api.base_url}/console/entrar") as sign_in_page:
        assert sign_in_page.status == 200
        assert sign_in_page.headers["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in sign_in_page.headers["Content-Security-Policy"]
        assert sign_in_page.headers["Cache-Control"] == "no-store"
