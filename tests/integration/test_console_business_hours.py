"""Business hours in a real browser: an admin sets them on the Agente page (a schedule that
does not parse is refused there, in pt-BR); a customer who asks for a person after hours is
told when the team is back (a fake Graph API receives it), and the conversation page says
"fora do horário" until the hours open, updating without a reload.

Closed is today's date in the closed days (open all day otherwise), in a zone where it is now
about noon (tests.integration.hours_support), so the team is back "amanhã às 00:00" for the
whole test whatever the hour it runs, across midnight too.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import asyncpg
from playwright.async_api import BrowserContext, Page, expect

from api.keys import Role
from core.channel_kind import ChannelKind
from hours.texts import after_hours_ack
from inbox.profile_names import formatted_number
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.hours_support import closed_today
from tests.integration.mode_support import CountingModel
from tests.integration.support import create_org, run_burst
from tests.integration.webhook_support import connect_number, running_webhook
from tests.integration.whatsapp_fakes import FakeGraphApi
from tests.whatsapp_payloads import cloud_delivery, cloud_text, cloud_value
from worker.resources import Resources
from worker.settings import Settings

NUMBER = "106540352242922"
ANA = "5511912345678"
POLL_DEADLINE_MS = 5000  # the pages promise an update within 5 s


async def _customer_says(settings: Settings, text: str) -> None:
    message = cloud_text(f"wamid.{uuid.uuid4().hex}", text, sender=ANA, timestamp=int(time.time()))
    async with running_webhook(settings) as hook:
        answer = await hook.post_cloud(cloud_delivery(cloud_value(NUMBER, [message])))
    assert answer.status == 200


async def _save_hours(page: Page, schedule: str, zone: str, closed: str) -> None:
    await page.fill("#business_hours", schedule)
    await page.fill("#timezone", zone)
    await page.fill("#closed_dates", closed)
    await page.click("button:has-text('Salvar horário')")


async def test_hours_set_in_the_console_and_shown_on_the_conversation(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org = await create_org(db, "Loja Horário")
    await connect_number(db, org, ChannelKind.CLOUD_API, NUMBER)
    key = await create_key(db, org, Role.ADMIN, "gerente")
    zone, today = closed_today(datetime.now(UTC))

    async with running_api(whatsapp_settings, resources.store) as api:
        page = await context.new_page()
        await sign_in(page, api.base_url, key)
        await page.goto(f"{api.base_url}/console/agente")
        await expect(page.locator("#horario + p")).to_contain_text("Sem horário definido")

        await _save_hours(page, "segunda a sexta das 9 às 18", zone, today)
        alert = page.locator(".aviso.erro")
        await expect(alert).to_have_attribute("data-codigo", "business_hours_invalid")
        # The refusal sits beside its field, and every field keeps what was typed.
        await expect(page.locator("#business_hours + .campo-erro")).to_contain_text(
            "dia desconhecido"
        )
        await expect(page.locator("#business_hours")).to_have_value("segunda a sexta das 9 às 18")
        await expect(page.locator("#timezone")).to_have_value(zone)
        await expect(page.locator("#closed_dates")).to_have_value(today)
        await shot(page, "hours-01-recusado")

        await _save_hours(page, "dom-sab 00:00-24:00", zone, today)
        await page.wait_for_url("**?feito=horario-salvo")
        await expect(page.locator("#horario + p")).to_have_text(
            "Agora: fora do horário · a equipe volta amanhã às 00:00"
        )
        # Shown as stored: the canonical text, Monday first.
        await expect(page.locator("#business_hours")).to_have_value("seg-dom 00:00-24:00")
        await expect(page.locator("#closed_dates")).to_have_value(today)
        await shot(page, "hours-02-salvo")

        model = CountingModel()
        await _customer_says(whatsapp_settings, "quero falar com um atendente")
        await run_burst(whatsapp_settings, model=model)
        assert [text for _, _, text in fake_graph.delivered] == [after_hours_ack("amanhã às 00:00")]

        await page.goto(f"{api.base_url}/console/atendimento")
        card = page.locator("[data-list=waiting] li.conversa", has_text=formatted_number(ANA))
        await card.locator("a.contato").click()
        await page.wait_for_url(f"{api.base_url}/console/conversas/*")
        conversation = page.url
        hours_line = page.locator("[data-field=hours-line]")
        await expect(hours_line).to_be_visible()
        await expect(hours_line).to_have_text("· fora do horário (a equipe volta amanhã às 00:00)")
        await shot(page, "hours-03-conversa-fora-do-horario")

        # Opened from another tab: the conversation page drops the mark by its poll.
        await page.evaluate("window.__sem_recarregar = 1")
        settings_tab = await context.new_page()
        await settings_tab.goto(f"{api.base_url}/console/agente")
        await _save_hours(settings_tab, "dom-sab 00:00-24:00", zone, "")
        await settings_tab.wait_for_url("**?feito=horario-salvo")
        await expect(settings_tab.locator("#horario + p")).to_have_text("Agora: aberto")
        await expect(hours_line).to_be_hidden(timeout=POLL_DEADLINE_MS)
        assert await page.evaluate("window.__sem_recarregar === 1")
        assert page.url == conversation
        await shot(page, "hours-04-conversa-aberto")
