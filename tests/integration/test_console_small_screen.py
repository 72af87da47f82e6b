"""The console on a phone (390x844, real chromium): every page of the tour fits the screen's
width (nothing scrolls the page sideways; a wide table scrolls inside its own box), the
navigation is folded into "Menu" until tapped, and a conversation shows its thread first with
the reply box within the screen's width; a viewer gets no empty action box, and an editor on
a conversation the company phone holds reads why only an admin can take it.
CONSOLE_SHOTS_DIR keeps a PNG of each page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.integration.api_support import ApiClient, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.console_tour import Tour, seed
from tests.integration.whatsapp_fakes import FakeGraphApi
from worker.resources import Resources
from worker.settings import Settings

PHONE = {"width": 390, "height": 844}
ORG_ZONE = ZoneInfo("America/Sao_Paulo")  # the tour's org never sets another
POLL_DEADLINE_MS = 5000  # the pages promise an update within 5 s
SIDEWAYS = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest_asyncio.fixture(loop_scope="session")
async def api(whatsapp_settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(whatsapp_settings, resources.store) as client:
        yield client


async def _phone(browser: Browser) -> BrowserContext:
    # A phone set to Tokyo: every time on the page is still São Paulo's (the org's zone).
    return await browser.new_context(
        locale="pt-BR",
        timezone_id="Asia/Tokyo",
        viewport=PHONE,
        device_scale_factor=1,
        is_mobile=True,
        has_touch=True,
    )


def _name(path: str) -> str:
    return path.replace("/console/", "").replace("/", "-").replace("?", "-").replace("=", "-")


# The first elements past the right edge, to say what to fix.
WIDEST = """() => [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
    .slice(0, 5)
    .map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))"""


async def _fits(page: Page, what: str) -> None:
    wider = await page.evaluate(SIDEWAYS)
    assert wider <= 0, f"{what} scrolls sideways: {await page.evaluate(WIDEST)}"


async def _menu_folds(page: Page) -> None:
    nav = page.locator("header nav")
    await expect(nav).to_be_hidden()
    await page.click("label.menu-botao")
    await expect(nav).to_be_visible()
    await expect(nav.locator("a", has_text="Conversas")).to_be_visible()
    await _fits(page, "the open menu")
    await shot(page, "390-menu-aberto")
    await page.click("label.menu-botao")
    await expect(nav).to_be_hidden()


async def _thread_first(page: Page, tour: Tour, base: str) -> None:
    await page.goto(f"{base}/console/conversas/{tour.conversation}")
    first = page.locator("ol.mensagens li.msg").first
    box = await first.bounding_box()
    assert box is not None and box["y"] < PHONE["height"] / 2, box  # above the fold, on top
    reply = page.locator("form.resposta textarea#text")
    await reply.scroll_into_view_if_needed()
    area = await reply.bounding_box()
    assert area is not None and area["x"] >= 0 and area["x"] + area["width"] <= PHONE["width"]
    await _fits(page, "the conversation")
    await shot(page, "390-conversa")
    # The page's own poll says when it was updated, in the org's zone, not the phone's.
    status = page.locator("[data-status]")
    await expect(status).to_contain_text("Atualizado às", timeout=POLL_DEADLINE_MS)
    said = (await status.inner_text()).removeprefix("Atualizado às ").rstrip(".")
    at = datetime.strptime(said, "%H:%M:%S").time()
    now = datetime.now(ORG_ZONE)
    assert (now - timedelta(minutes=1)).time() <= at <= now.time() or now.hour == 0, said


async def _who_may_act(pages: dict[str, Page], tour: Tour, base: str) -> None:
    """A viewer gets no empty action box; an editor on a conversation the company phone
    holds reads why only an admin can take it (and is offered no button)."""
    viewer, editor = pages["viewer"], pages["editor"]
    await viewer.goto(f"{base}/console/conversas/{tour.conversation}")
    await expect(viewer.locator(".acoes-conversa")).to_be_hidden()
    await shot(viewer, "390-leitura-conversa")
    await editor.goto(f"{base}/console/conversas/{tour.phone_held}")
    note = editor.locator("[data-offer=phone_note]")
    await expect(note).to_be_visible()
    await expect(note).to_contain_text("Só quem tem acesso de administração pode assumi-la")
    await expect(editor.locator(".acoes-conversa button")).to_have_count(3)
    for offer in ("takeover", "force", "release"):
        await expect(editor.locator(f"[data-offer={offer}]")).to_be_hidden()
    await shot(editor, "390-edicao-celular")


async def test_every_page_is_usable_on_a_phone(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_graph: FakeGraphApi,
    api: ApiClient,
    browser: Browser,
) -> None:
    tour = await seed(db, resources, whatsapp_settings, fake_graph, api)
    keys = {"admin": tour.admin, "editor": tour.editor, "viewer": tour.viewer}
    contexts = {role: await _phone(browser) for role in ("", *keys)}
    try:
        pages = {role: await context.new_page() for role, context in contexts.items()}
        for role, key in keys.items():
            await sign_in(pages[role], api.base_url, key)
        await _menu_folds(pages["admin"])
        await _thread_first(pages["editor"], tour, api.base_url)
        await _who_may_act(pages, tour, api.base_url)
        seen = set()
        for visits in tour.pages.values():
            for role, path in visits:
                page = pages[role]
                await page.goto(api.base_url + path)
                await _fits(page, f"{path} ({role or 'sem sessão'})")
                name = _name(path)
                if name not in seen:  # one picture per address
                    seen.add(name)
                    await shot(page, f"390-{role or 'anon'}-{name}"[:120])
    finally:
        for context in contexts.values():
            await context.close()
