"""Templates, follow-ups and the opt-out on the console's conversation page, in a real
browser: a conversation past the 24-hour window offers the approved templates, one is sent
(a real burst worker hands it to a fake Graph API as a template); the agent's follow-ups are
listed and one is cancelled; after PARAR the page says the customer opted out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
from playwright.async_api import BrowserContext, expect

from tests.integration.api_support import running_api
from tests.integration.console_support import shot, sign_in
from tests.integration.mode_support import CountingModel
from tests.integration.support import run_burst
from tests.integration.test_followups import SchedulingModel, _reminder, _sync
from tests.integration.test_templates import CUSTOMER, NUMBER, customer_says, setup_number
from tests.integration.whatsapp_fakes import FakeGraphApi
from worker.resources import Resources
from worker.settings import Settings


async def test_a_person_sends_a_template_cancels_a_followup_and_sees_the_opt_out(
    whatsapp_settings: Settings,
    db: asyncpg.Connection,
    fake_graph: FakeGraphApi,
    resources: Resources,
    context: BrowserContext,
) -> None:
    org, editor = await setup_number(db, fake_graph)
    await _sync(db, org)
    model = SchedulingModel(_reminder(datetime.now(UTC) + timedelta(days=2)))
    await customer_says(whatsapp_settings, "quero agendar para sexta", age_s=0)
    await run_burst(whatsapp_settings, model=model)
    await customer_says(whatsapp_settings, "e agendar outra na semana que vem")
    await run_burst(whatsapp_settings, model=model)
    # The customer's messages, then, were more than 24 hours ago.
    await db.execute(
        "update messages set sent_at = sent_at - interval '25 hours', "
        "received_at = received_at - interval '25 hours' where direction = 'inbound'"
    )
    async with running_api(whatsapp_settings, resources.store) as api:
        [item] = (await api.get("/v1/conversations", editor)).body["items"]
        page = await context.new_page()
        await sign_in(page, api.base_url, editor)
        await page.goto(f"{api.base_url}/console/conversas/{item['id']}")
        form = page.locator("form.template")
        await expect(form.locator(".aviso")).to_contain_text("mais de 24 horas")
        options = await form.locator("select option").all_inner_texts()
        assert len(options) == 1 and options[0].startswith("lembrete_vespera (português)")
        scheduled = page.locator("li.agendamento.estado-scheduled")
        await expect(scheduled).to_have_count(2)
        await shot(page, "templates-01-fora-da-janela")

        await scheduled.first.locator("button:has-text('Cancelar')").click()
        await page.wait_for_url("**?feito=agendamento-cancelado")
        await expect(page.locator("li.agendamento.estado-scheduled")).to_have_count(1)
        await expect(page.locator("li.agendamento.estado-cancelled")).to_contain_text(
            "cancelada por"
        )

        await page.fill("#params", "Ana\n15h")
        await page.click("button:has-text('Enviar template')")
        await page.wait_for_url("**?feito=resposta-enviada")
        await run_burst(whatsapp_settings, model=CountingModel())
        assert fake_graph.templates_sent == [
            (NUMBER, CUSTOMER, "lembrete_vespera", "pt_BR", ["Ana", "15h"])
        ]
        sent = page.locator("ol.mensagens li.autor-person").last
        await expect(sent.locator(".balao")).to_contain_text(
            "Oi Ana, lembrete: seu horário é amanhã às 15h."
        )
        await expect(sent.locator(".meta")).to_contain_text("entrega: enviada", timeout=5000)
        await shot(page, "templates-02-template-enviado")

        await customer_says(whatsapp_settings, "PARAR")
        await run_burst(whatsapp_settings, model=CountingModel())
        await page.reload()
        await expect(page.locator(".aviso.opt-out")).to_contain_text("PARAR")
        await expect(page.locator("form.template")).to_have_count(0)  # it would be refused
        await shot(page, "templates-03-opt-out")
        await page.goto(f"{api.base_url}/console/conversas")
        # Conversas shows the number formatted (+55 11 91234-9999).
        row = page.locator("tbody tr", has_text=f"{CUSTOMER[4:9]}-{CUSTOMER[9:]}")
        await expect(row).to_contain_text("PARAR")

        # The number's templates, from the Números page.
        await page.goto(f"{api.base_url}/console/numeros")
        await page.click("a:has-text('templates')")
        await page.wait_for_url(f"**/console/numeros/cloud_api/{NUMBER}/templates")
        rows = page.locator("tr.template")
        await expect(rows).to_have_count(2)
        await expect(page.locator("tr.estado-rejected")).to_contain_text("recusado pela Meta")
        await expect(page.locator("tr.estado-approved")).to_contain_text("lembrete_vespera")
        await shot(page, "templates-04-numero")
