"""Shared pieces of the console tests: headless Debian chromium driven by Playwright."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
# Set to a directory to keep a PNG of each page the tests look at (never in CI). Not a
# SKILLET_* name: the suite clears those.
SHOTS_ENV = "CONSOLE_SHOTS_DIR"


def _chromium_missing() -> bool:
    return not CHROMIUM.exists()


def _shots_dir() -> Path | None:
    directory = os.environ.get(SHOTS_ENV)
    if not directory:
        return None
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.asynccontextmanager
async def launched_chromium() -> AsyncIterator[Browser]:
    """Debian's chromium, headless; the test is skipped, saying why, when it is missing."""
    if _chromium_missing():
        pytest.skip(
            "Debian's chromium is not at /usr/bin/chromium: `apt-get install -y chromium` "
            "(.ci/run installs it) to run the console's browser tests"
        )
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            # As root in a container chromium's sandbox cannot start; the pages are ours.
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        try:
            yield browser
        finally:
            await browser.close()


async def shot(page: Page, name: str) -> None:
    directory = _shots_dir()
    if directory is not None:
        await page.screenshot(path=str(directory / f"{name}.png"), full_page=True)


HOME_PAGES = re.compile(r".*/console/(atendimento|painel)$")


async def sign_in(page: Page, base_url: str, key: str) -> None:
    await page.goto(f"{base_url}/console/entrar")
    await page.fill("#key", key)
    await page.press("#key", "Enter")  # the operator's form (the e-mail form comes first)
    await page.wait_for_url(HOME_PAGES)  # an admin lands on the Painel


async def sign_in_person(page: Page, base_url: str, email: str, password: str) -> None:
    await page.goto(f"{base_url}/console/entrar")
    await page.fill("#email", email)
    await page.fill("#password", password)
    await page.click("form.entrar-pessoa button")
    await page.wait_for_url(HOME_PAGES)


async def csrf_of(page: Page) -> str:
    """The session's CSRF token as the page carries it (the sign-out form has one)."""
    value = await page.locator("form.sair input[name=csrf]").get_attribute("value")
    assert value
    return value
