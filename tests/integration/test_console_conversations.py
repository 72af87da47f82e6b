"""Conversas in a real browser: each customer by profile name and formatted number, the last
message and the count of unanswered messages on each row; the search box and the filters
narrow the list; a refused search is said in pt-BR beside its field and keeps what was typed.
The conversation page and Atendimento name the customer the same way."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
from playwright.async_api import BrowserContext, expect

from api.keys import Role
from api.passwords import hash_password
from tests.integration.api_support import create_key, running_api
from tests.integration.console_support import shot, sign_in, sign_in_person
from tests.integration.conversation_rows import insert_conversation
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

T0 = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
JOAO = "João Araújo · +55 11 97777-6666"
MARIANA = "Mariana Lima · +55 21 98888-7777"
PASSWORD = "senha-forte-de-teste"


async def test_conversas_names_customers_and_finds_them(
    settings: Settings, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    org = await create_org(db, "Loja Conversas")
    await insert_conversation(db, org, "5511977776666", "João Araújo", ["oi, bom dia"], at=T0)
    await insert_conversation(
        db,
        org,
        "5521988887777",
        "Mariana Lima",
        ["Vocês aceitam PIX?", "e cartão também?"],
        at=T0 + timedelta(hours=1),
        mode="waiting",
        answered=False,
    )
    await insert_conversation(db, org, "351912345678", None, ["olá"], at=T0 + timedelta(hours=2))
    key = await create_key(db, org, Role.ADMIN)
    async with running_api(settings, resources.store) as api:
        page = await context.new_page()
        await sign_in(page, api.base_url, key)
        # Atendimento (an admin lands on the Painel): the waiting customer by name and number.
        await page.goto(f"{api.base_url}/console/atendimento")
        await expect(page.locator("[data-list=waiting] a.contato")).to_have_text(MARIANA)

        await page.goto(f"{api.base_url}/console/conversas")
        rows = page.locator("table.conversas tbody tr")
        await expect(rows).to_have_count(3)
        await expect(rows.nth(0)).to_contain_text("+351 912 345 678")
        mariana = rows.nth(1)
        await expect(mariana).to_contain_text(MARIANA)
        await expect(mariana.locator(".nao-lidas")).to_have_text("2 sem resposta")
        await expect(mariana.locator("td.ultima")).to_contain_text("Cliente: e cartão também?")
        await expect(rows.nth(2)).to_contain_text(JOAO)
        await expect(rows.nth(2).locator(".nao-lidas")).to_have_count(0)
        await shot(page, "conversas-lista")

        # Search: accents and case do not matter; the words a customer wrote are found.
        await page.fill("#busca-q", "joao")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(1)
        await expect(rows.first).to_contain_text(JOAO)
        await page.fill("#busca-q", "pix")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(1)
        await expect(rows.first).to_contain_text(MARIANA)

        # Filters: only those with unanswered messages; a mode.
        await page.fill("#busca-q", "")
        await page.check("form.busca input[name=unanswered]")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(1)
        await expect(page.locator("form.busca input[name=unanswered]")).to_be_checked()
        await page.uncheck("form.busca input[name=unanswered]")
        await page.select_option("#busca-modo", "agent")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(2)
        await page.select_option("#busca-quem", "phone")
        await page.click("form.busca button[type=submit]")
        await expect(page.locator("p.vazio")).to_have_text(
            "Nenhuma conversa encontrada com essa busca."
        )

        # A search of one letter: refused beside the field, in pt-BR, the letter kept.
        await page.goto(f"{api.base_url}/console/conversas")
        await page.fill("#busca-q", "x")
        await page.click("form.busca button[type=submit]")
        error = page.locator("#erro-q")
        await expect(error).to_contain_text("Digite de 2 a 100 caracteres")
        await expect(page.locator("#busca-q")).to_have_value("x")
        await expect(page.locator("#busca-q")).to_have_attribute("aria-invalid", "true")
        text = await page.locator("main").inner_text()
        assert "invalid_search" not in text and "None" not in text
        await shot(page, "conversas-busca-recusada")

        # The conversation's page names the customer the same way.
        await page.goto(f"{api.base_url}/console/conversas")
        await rows.nth(2).locator("a").click()
        await expect(page.locator("h1")).to_have_text(f"Conversa com {JOAO}")

        # A phone's width: the form wraps, nothing scrolls sideways.
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.goto(f"{api.base_url}/console/conversas?q=mariana")
        await expect(rows).to_have_count(1)
        await shot(page, "conversas-390")
        await page.close()


async def test_a_signed_in_person_finds_the_conversations_they_hold(
    settings: Settings, db: asyncpg.Connection, resources: Resources, context: BrowserContext
) -> None:
    """`Comigo` is the signed-in person; the team's other people are offered by name."""
    org = await create_org(db, "Loja Equipe")
    ana, bia = uuid.uuid4(), uuid.uuid4()
    for person, name in ((ana, "Ana"), (bia, "Bia")):
        await db.execute(
            """insert into people (id, organization_id, name, email, role, password_hash)
               values ($1, $2, $3, $4, 'editor', $5)""",
            person,
            org,
            name,
            f"{name.lower()}@loja.example",
            await hash_password(PASSWORD),
        )
    await insert_conversation(
        db, org, "5511911110001", "Carla", ["oi"], at=T0, mode="human", held_by=f"person:{ana}"
    )
    await insert_conversation(
        db,
        org,
        "5511911110002",
        "Davi",
        ["olá"],
        at=T0 + timedelta(hours=1),
        mode="human",
        held_by=f"person:{bia}",
    )
    async with running_api(settings, resources.store) as api:
        page = await context.new_page()
        await sign_in_person(page, api.base_url, "ana@loja.example", PASSWORD)
        await page.goto(f"{api.base_url}/console/conversas")
        options = await page.locator("#busca-quem option").all_inner_texts()
        assert options == ["Qualquer um", "Comigo", "Celular da empresa", "Bia"]
        rows = page.locator("table.conversas tbody tr")
        await page.select_option("#busca-quem", "me")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(1)
        await expect(rows.first).to_contain_text("Carla · +55 11 91111-0001")
        await expect(rows.first).to_contain_text("com Ana")
        await page.select_option("#busca-quem", label="Bia")
        await page.click("form.busca button[type=submit]")
        await expect(rows).to_have_count(1)
        await expect(rows.first).to_contain_text("Davi")
        await page.close()
