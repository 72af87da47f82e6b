"""The console's *Uso* page in a real browser: the org's tokens of the last 30 UTC days per
model and per day, as `GET /v1/usage/tokens` answers them, with names shown as text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext

from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, record_turn_usage, running_api
from tests.integration.console_support import launched_chromium, shot, sign_in
from tests.integration.support import create_org
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NOW = datetime(2025, 3, 31, 23, 30, tzinfo=UTC)
HOSTILE_NAME = "<img src=x onerror=alert(1)>"


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, clock=lambda: NOW) as client:
        yield client


@pytest_asyncio.fixture(loop_scope="session")
async def context() -> AsyncIterator[BrowserContext]:
    async with launched_chromium() as browser:
        opened = await _context(browser)
        yield opened
        await opened.close()


async def _context(browser: Browser) -> BrowserContext:
    return await browser.new_context(locale="pt-BR", viewport={"width": 1280, "height": 900})


def _ago(days: int, hour: int = 14) -> datetime:
    return NOW.replace(hour=hour, minute=0) - timedelta(days=days)


async def test_the_usage_page_shows_the_last_30_days_per_model_and_per_day(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext
) -> None:
    org, other = await create_org(db, "Padaria Pão Quente"), await create_org(db, "Outra")
    sales = await insert_agent(db, org, "Vendas", "Você vende pães.")
    night = await insert_agent(db, org, HOSTILE_NAME, "Você atende à noite.")
    claude, gpt = "claude-sonnet-4-5", "gpt-4.1-mini"
    for days in range(0, 7):  # a week of a bakery's chats
        await record_turn_usage(
            db, org, sales, "anthropic", claude, _ago(days), (41_200, 2_310, 30_900, 4_100)
        )
        await record_turn_usage(
            db, org, sales, "anthropic", claude, _ago(days, 18), (39_800, 1_990, 35_000, 0)
        )
    await record_turn_usage(
        db, org, night, "openai", gpt, _ago(0, 2), (12_000, 900, 6_000, 0), calls=2
    )
    await record_turn_usage(db, org, night, "openai", HOSTILE_NAME, _ago(1, 3), None)
    await record_turn_usage(db, org, sales, "anthropic", claude, _ago(30), (999_999, 9, 0, 0))
    await record_turn_usage(db, other, None, "openai", "modelo-da-outra", _ago(0), (5, 5, 0, 0))
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))

    await page.click("header nav a:has-text('Uso')")
    await page.wait_for_url(f"{api.base_url}/console/uso")
    main = await page.locator("main").inner_text()
    assert "de 02/03/2025 a 31/03/2025" in main
    summary = await page.locator(".resumo").inner_text()
    # 14 claude turns (567.000 in, 461.300 cached) + gpt's 12.000 (6.000 cached) + one
    # turn without counts.
    assert "579.000 tokens de entrada (81% do cache)" in summary
    assert "31.000 de saída" in summary and "16 turnos" in summary

    totals = page.locator("table.uso:not(.dias) tbody tr")
    assert [await r.locator("td").all_inner_texts() for r in await totals.all()] == [
        ["anthropic claude-sonnet-4-5", "14", "14", "567.000", "81%", "30.100", "0"],
        ["openai gpt-4.1-mini", "1", "2", "12.000", "50%", "900", "0"],
        [f"openai {HOSTILE_NAME}", "1", "1", "0", "—", "0", "1"],
    ]
    days = page.locator("table.dias tbody tr")
    assert await days.count() == 7 + 2  # 7 days of Vendas; the night agent's two models
    first_three = [await r.locator("td").all_inner_texts() for r in (await days.all())[:3]]
    assert first_three == [
        ["31/03/2025", HOSTILE_NAME, "openai gpt-4.1-mini", "1", "12.000", "50%", "900", "0"],
        ["31/03/2025", "Vendas", "anthropic claude-sonnet-4-5", "2", "81.000", "81%", "4.300", "0"],
        ["30/03/2025", HOSTILE_NAME, f"openai {HOSTILE_NAME}", "1", "0", "—", "0", "1"],
    ]
    assert "25/03/2025" in await days.last.inner_text()
    assert "999.999" not in main and "modelo-da-outra" not in main
    assert await page.locator("main img").count() == 0  # the names are text, never markup
    await shot(page, "15-uso")


async def test_an_org_without_replies_sees_an_empty_usage_page(
    api: ApiClient, db: asyncpg.Connection, context: BrowserContext
) -> None:
    org = await create_org(db)
    page = await context.new_page()
    await sign_in(page, api.base_url, await create_key(db, org, Role.VIEWER))
    await page.goto(f"{api.base_url}/console/uso")
    assert "Nenhuma resposta do agente nesses 30 dias." in await page.locator("main").inner_text()
    assert await page.locator("table").count() == 0
