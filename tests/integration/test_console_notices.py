"""Notifications in a real browser: with any console page open, a conversation that starts
waiting, and a customer's new message in a conversation the signed-in key holds, show within
5 s as a count in the tab's title, a sound (unless muted) and a browser notification naming
the contact, never the message's text; at most one notification per conversation per 30 s;
permission is never asked on load. A transfer to a person is told to that person."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest_asyncio
from playwright.async_api import Browser, BrowserContext, Page, expect

from api.keys import Role
from api.notice_queries import list_notices
from api.passwords import hash_password
from core.channel_kind import ChannelKind
from core.tenancy import org_connection
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in, sign_in_person
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
ANA, BRUNO = "5511912345678", "5521987654321"
NAMES = {ANA: "Ana Souza", BRUNO: "Bruno Lima"}  # their WhatsApp profile names
SECRET_TEXT = "quero falar com um atendente sobre meu pedido 4411"
POLL_DEADLINE_MS = 5000

# Records what the page's script does with the browser's Notification and audio: the real
# ones still run (permission is granted to the context).
WATCH = """
window.__avisos = []; window.__pedidos = 0; window.__toques = 0;
(function () {
  var Real = window.Notification;
  function Watched(title, options) {
    window.__avisos.push({ title: title, body: options && options.body });
    return new Real(title, options);
  }
  Object.defineProperty(Watched, "permission", { get: function () { return Real.permission; } });
  Watched.requestPermission = function () {
    window.__pedidos += 1;
    return Real.requestPermission.apply(Real, arguments);
  };
  window.Notification = Watched;
  var play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    window.__toques += 1;
    return play.apply(this, arguments);
  };
}());
"""


@pytest_asyncio.fixture(loop_scope="session")
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    opened = await browser.new_context(
        locale="pt-BR", viewport={"width": 1280, "height": 900}, permissions=["notifications"]
    )
    await opened.add_init_script(WATCH)
    yield opened
    await opened.close()


async def _customer_says(settings: Settings, sender: str, text: str) -> None:
    message = cloud_text(
        f"wamid.{uuid.uuid4().hex}", text, sender=sender, timestamp=int(time.time())
    )
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(
            cloud_delivery(cloud_value(NUMBER, [message], profile_names=NAMES))
        )
    assert answer.status == 200


async def _until(page: Page, expression: str) -> None:
    """Waits up to the pages' promise (5 s) for `expression` to hold in the page (evaluated
    from outside: the console's CSP refuses the in-page eval wait_for_function uses)."""
    deadline = time.monotonic() + POLL_DEADLINE_MS / 1000
    while not await page.evaluate(expression):
        assert time.monotonic() < deadline, expression
        await asyncio.sleep(0.1)


async def _watched(page: Page) -> dict[str, Any]:
    return dict(
        await page.evaluate(
            "({avisos: window.__avisos, pedidos: window.__pedidos, toques: window.__toques})"
        )
    )


async def test_a_waiting_conversation_and_a_new_message_are_told_on_any_page(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Avisos")
    await insert_agent(db, org, "Bia", "Você é a Bia.")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    key = await create_key(db, org, Role.EDITOR)
    model = CountingModel()

    async with running_api(whatsapp_settings, resources.store) as api:
        page = await context.new_page()
        await sign_in(page, api.base_url, key)
        await page.goto(f"{api.base_url}/console/uso")  # any page
        await expect(page).to_have_title("Uso · skillet")
        await expect(page.locator("[data-avisos-permitir]")).to_be_hidden()  # granted

        await _customer_says(whatsapp_settings, ANA, SECRET_TEXT)
        await run_burst(whatsapp_settings, model=model)  # a handoff: it waits
        await expect(page).to_have_title("(1) Uso · skillet", timeout=POLL_DEADLINE_MS)
        await _until(page, "window.__avisos.length === 1")
        seen = await _watched(page)
        assert seen["avisos"] == [
            {"title": "Conversa esperando uma pessoa", "body": "Ana Souza · +55 11 91234-5678"}
        ]
        assert seen["toques"] == 1 and seen["pedidos"] == 0  # never asked on load
        await shot(page, "notices-01-titulo")

        # Taken by this key: nothing waits; the customer writes again in it.
        conversation = await db.fetchval(
            "select id from conversations where organization_id = $1", org
        )
        taken = await api.call(
            "POST", f"/v1/conversations/{conversation}/takeover", key, json_body={}
        )
        assert taken.status == 200
        await expect(page).to_have_title("(1) Uso · skillet")  # its message is unanswered
        for _ in range(2):  # a poll after the takeover: taking it tells nothing
            async with page.expect_response(lambda r: "/console/avisos/dados" in r.url):
                pass
        assert (await _watched(page))["toques"] == 1
        await _customer_says(whatsapp_settings, ANA, "e então? " + SECRET_TEXT)
        await run_burst(whatsapp_settings, model=model)
        await _until(page, "window.__toques === 2")
        # A sound, but no second notification for the same conversation within 30 s.
        assert len((await _watched(page))["avisos"]) == 1

        # Muted (remembered), another customer waits: a notification, no sound.
        await page.click("[data-avisos-som]")
        await expect(page.locator("[data-avisos-som]")).to_have_text("Som: desligado")
        await _customer_says(whatsapp_settings, BRUNO, "quero falar com um atendente")
        await run_burst(whatsapp_settings, model=model)
        await expect(page).to_have_title("(2) Uso · skillet", timeout=POLL_DEADLINE_MS)
        await _until(page, "window.__avisos.length === 2")
        seen = await _watched(page)
        assert seen["avisos"][1] == {
            "title": "Conversa esperando uma pessoa",
            "body": "Bruno Lima · +55 21 98765-4321",
        }
        assert seen["toques"] == 2
        assert all("pedido" not in (n["body"] or "") for n in seen["avisos"])
        assert model.requests == []  # handoffs before any model call

        # Another page of the same tab tells nothing again; the mute is remembered.
        await page.goto(f"{api.base_url}/console/atendimento")
        await expect(page).to_have_title("(2) Atendimento · skillet", timeout=POLL_DEADLINE_MS)
        await expect(page.locator("[data-avisos-som]")).to_have_text("Som: desligado")
        assert (await _watched(page))["avisos"] == []
        await shot(page, "notices-02-atendimento")


async def test_the_permission_is_asked_only_by_the_button(
    settings: Settings, db: asyncpg.Connection, resources: Resources, browser: Browser
) -> None:
    org = await create_org(db, "Loja")
    key = await create_key(db, org, Role.VIEWER)
    fresh = await browser.new_context(locale="pt-BR")  # no permission granted yet
    await fresh.add_init_script(WATCH)
    try:
        async with running_api(settings, resources.store) as api:
            page = await fresh.new_page()
            await sign_in(page, api.base_url, key)
            allow = page.locator("[data-avisos-permitir]")
            await expect(allow).to_be_visible()
            assert (await _watched(page))["pedidos"] == 0
            await allow.click()
            await _until(page, "window.__pedidos === 1")
    finally:
        await fresh.close()


async def test_a_conversation_passed_to_a_person_is_told_until_they_answer(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db, "Loja")
    admin = await create_key(db, org, Role.ADMIN)
    ana = uuid.uuid4()
    await db.execute(
        "insert into people (id, organization_id, name, email, role) "
        "values ($1, $2, 'Ana', $3, 'editor')",
        ana,
        org,
        f"ana-{ana}@loja.example.com",
    )
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        ANA,
    )
    async with running_api(settings, resources.store) as api:
        path = f"/v1/conversations/{conversation}"
        assert (await api.call("POST", f"{path}/takeover", admin, json_body={})).status == 200
        passed = await api.call(
            "POST", f"{path}/transfer", admin, json_body={"person_id": str(ana)}
        )
        assert passed.status == 200, passed.body
        async with org_connection(api.deps.pool, org) as conn:
            told = await list_notices(conn, org, f"person:{ana}")
            others = await list_notices(conn, org, admin[:12])
    assert [(n.conversation_id, n.kind, n.contact_id) for n in told] == [
        (conversation, "transfer", ANA)
    ]
    assert others == []


async def test_a_person_is_told_in_the_browser_when_a_conversation_is_passed_to_them(
    settings: Settings, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    org = await create_org(db, "Loja")
    admin = await create_key(db, org, Role.ADMIN)
    ana, email, password = (
        uuid.uuid4(),
        f"ana-{uuid.uuid4().hex[:8]}@loja.example.com",
        "senha da ana 123",
    )
    await db.execute(
        "insert into people (id, organization_id, name, email, role, password_hash) "
        "values ($1, $2, 'Ana', $3, 'editor', $4)",
        ana,
        org,
        email,
        await hash_password(password),
    )
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', $2) returning id",
        org,
        BRUNO,
    )
    async with running_api(settings, resources.store) as api:
        page = await context.new_page()
        await sign_in_person(page, api.base_url, email, password)
        await page.goto(f"{api.base_url}/console/skills")
        await expect(page).to_have_title("Skills instaladas · skillet")
        path = f"/v1/conversations/{conversation}"
        assert (await api.call("POST", f"{path}/takeover", admin, json_body={})).status == 200
        passed = await api.call(
            "POST", f"{path}/transfer", admin, json_body={"person_id": str(ana)}
        )
        assert passed.status == 200
        await expect(page).to_have_title(
            "(1) Skills instaladas · skillet", timeout=POLL_DEADLINE_MS
        )
        await _until(page, "window.__avisos.length === 1")
        seen = await _watched(page)
        assert seen["avisos"] == [
            {"title": "Conversa passada para você", "body": "+55 21 98765-4321"}
        ]
        await shot(page, "notices-03-transferida")
