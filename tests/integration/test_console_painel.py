"""The console's Painel in a real browser: an admin lands on it; SVG charts with their numbers
in tables beside them, in the org's days; a period typed wrong is kept and refused beside its
field; the CSV download; usable at 390 px wide."""

from __future__ import annotations

import csv
import io
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest_asyncio
from playwright.async_api import BrowserContext, Page, expect

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, record_turn_usage, running_api
from tests.integration.console_support import SHOTS_ENV, launched_chromium, shot, sign_in
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

HOSTILE_NAME = "<img src=x onerror=alert(1)>"


async def _screen(page: Page, name: str) -> None:
    """What a phone shows at once (the full-page shot is too tall to read at 390 px)."""
    directory = os.environ.get(SHOTS_ENV)
    if directory:
        await page.screenshot(path=str(Path(directory) / f"{name}.png"))


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def browser_contexts() -> AsyncIterator[tuple[BrowserContext, BrowserContext]]:
    async with launched_chromium() as browser:
        wide = await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})
        phone = await browser.new_context(locale="pt-BR", viewport={"width": 390, "height": 844})
        yield wide, phone
        await wide.close()
        await phone.close()


async def _seed(db: asyncpg.Connection, org: uuid.UUID, today: date) -> None:
    """Two weeks of a shop's chats: 3-6 conversations a day, the agent answering in seconds,
    one a day handed to a person who answers minutes later."""
    for back in range(14):
        day = today - timedelta(days=back)
        noon = datetime(day.year, day.month, day.day, 15, 0, tzinfo=UTC)  # 12:00 in São Paulo
        for n in range(3 + back % 4):
            conv = await db.fetchval(
                "insert into conversations (organization_id, channel, contact_id) "
                "values ($1, 'whatsapp', $2) returning id",
                org,
                f"55119{back:02d}{n:06d}",
            )
            at = noon + timedelta(minutes=37 * n)
            asked = await db.fetchval(
                "insert into messages (organization_id, conversation_id, direction, channel, "
                "external_id, body, received_at, created_at) values "
                "($1, $2, 'inbound', 'whatsapp', $3, 'oi', $4, $4) returning id",
                org,
                conv,
                f"wamid.{uuid.uuid4().hex}",
                at,
            )
            await db.execute(
                "insert into messages (organization_id, conversation_id, direction, channel, "
                "body, reply_to_id, author, created_at) values "
                "($1, $2, 'outbound', 'whatsapp', 'olá', $3, 'agent', $4)",
                org,
                conv,
                asked,
                at + timedelta(seconds=3 + 5 * n),
            )
            if n == 0:
                await db.execute(
                    "update conversations set mode = 'waiting', mode_cause = $2, "
                    "mode_since = $3, handoff_at = $3 where id = $1",
                    conv,
                    ("customer", "tool")[back % 2],
                    at,
                )
                await db.execute(
                    "update conversations set mode = 'human', held_by = 'cli', "
                    "person_replied_at = $2 where id = $1",
                    conv,
                    at + timedelta(minutes=4 + back),
                )
        await record_turn_usage(
            db, org, None, "anthropic", "claude-sonnet-4-5", noon, (41_200, 2_310, 30_900, 0)
        )
    await db.execute(
        "insert into skill_activation_daily (organization_id, skill_name, day, hard_count, "
        "probe_count, intent_count) values ($1, 'agendamento', $2, 40, 3, 5), "
        "($1, 'entrega', $2, 22, 9, 0), ($1, $3, $2, 1, 12, 0)",
        org,
        today,
        HOSTILE_NAME,
    )


async def test_an_admin_lands_on_the_painel_and_reads_its_charts_and_numbers(
    api: ApiClient,
    db: asyncpg.Connection,
    browser_contexts: tuple[BrowserContext, BrowserContext],
) -> None:
    wide, phone = browser_contexts
    org = await create_org(db, "Padaria Pão Quente")
    today = await db.fetchval("select (now() at time zone 'America/Sao_Paulo')::date")
    await _seed(db, org, today)
    admin = await create_key(db, org, Role.ADMIN)

    page = await wide.new_page()
    await sign_in(page, api.base_url, admin)
    assert page.url == f"{api.base_url}/console/painel"
    await page.goto(f"{api.base_url}/console")
    assert page.url == f"{api.base_url}/console/painel"  # the console's first page, for an admin
    await expect(page.locator("h1")).to_have_text("Painel")
    await expect(page.locator("header nav a.ativo")).to_have_text("Painel")
    assert await page.locator("svg.grafico-svg").count() >= 8
    summary = await page.locator(".resumo").inner_text()
    assert "passagens para uma pessoa" in summary and "14" in summary
    conversations = page.locator("section.grafico").first
    first_row = conversations.locator("tbody tr").first
    assert (await first_row.inner_text()).split() == [today.strftime("%d/%m/%Y"), "2", "1"]
    # The hostile skill name is text in the ranking and its table, never markup.
    unanswered = page.locator("section.grafico", has_text="Procura sem resposta")
    await expect(unanswered.locator("tbody tr").first).to_contain_text(HOSTILE_NAME)
    assert await page.locator("img").count() == 0
    await shot(page, "painel-01-admin")

    # A period typed wrong: kept as typed, refused beside the field.
    await page.fill("#from", (today - timedelta(days=120)).isoformat())
    await page.fill("#to", today.isoformat())
    await page.click("form.periodo button")
    await expect(page.locator("#erro-periodo")).to_contain_text("no máximo 90 dias")
    assert await page.input_value("#from") == (today - timedelta(days=120)).isoformat()
    assert await page.locator("#from").get_attribute("aria-invalid") == "true"
    await shot(page, "painel-02-refused")

    await page.click("a:has-text('últimos 30 dias')")
    await expect(page.locator("#from")).to_have_value((today - timedelta(days=29)).isoformat())
    await page.click("a:has-text('últimos 7 dias')")
    await expect(page.locator("#from")).to_have_value((today - timedelta(days=6)).isoformat())
    href = await page.locator("a.baixar").get_attribute("href")
    assert href is not None
    download = await page.request.get(api.base_url + href)
    assert download.headers["content-type"].startswith("text/csv")
    lines = list(csv.reader(io.StringIO(await download.text())))
    assert lines[0][:3] == ["day", "conversations", "conversations_agent_only"]
    assert len(lines) == 1 + 7 and lines[-1][0] == today.isoformat()

    small = await phone.new_page()
    await sign_in(small, api.base_url, admin)
    scroll = await small.evaluate("document.documentElement.scrollWidth")
    assert scroll <= 390, scroll  # nothing scrolls sideways
    await shot(small, "painel-03-390px")
    await _screen(small, "painel-04-390px-top")
    await small.locator("section.grafico").nth(2).scroll_into_view_if_needed()
    await _screen(small, "painel-05-390px-chart")


async def test_a_viewer_finds_the_painel_in_the_menu_but_lands_on_atendimento(
    api: ApiClient,
    db: asyncpg.Connection,
    browser_contexts: tuple[BrowserContext, BrowserContext],
) -> None:
    org = await create_org(db, "Loja")
    page = await browser_contexts[0].new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))
    assert page.url == f"{api.base_url}/console/atendimento"
    await page.goto(f"{api.base_url}/console/")
    assert page.url == f"{api.base_url}/console/atendimento"
    await page.click("header nav a:has-text('Painel')")
    await expect(page.locator("h1")).to_have_text("Painel")
    await expect(page.locator(".vazio").first).to_have_text("Nada neste período.")
