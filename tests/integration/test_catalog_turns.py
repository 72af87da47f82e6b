"""Installed catalog skills in real turns: what customers type matches, customize and
uninstall are seen by the very next turn, activations carry the version that answered."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg
from prometheus_client import generate_latest

from skills.catalog import import_skill_package, install_catalog_skill, uninstall_skill
from skills.catalog_seed import DEFAULT_CATALOG_DIR, seed_catalog
from tests.integration.support import create_org, enqueue, payload, result_of, run_burst
from tests.package_builders import skill_zip
from tests.prometheus_samples import parse_samples, value
from turn.agent_queries import insert_agent
from turn.local_model import NO_SKILL_REPLY
from worker.resources import Resources
from worker.settings import Settings

CUSTOM_CHECKLIST = "Clínica Sorriso: agenda de segunda a sexta, das 8h às 18h.\nTraga RG."


async def _turn_and_intent_matches(
    settings: Settings, org: uuid.UUID, text: str
) -> tuple[dict[str, Any], float]:
    """The turn's job result, and the skills its worker reports only a model matched."""
    [job] = await enqueue(settings, payload(org, f"m-{uuid.uuid4()}", text))
    worker = await run_burst(settings)
    result: dict[str, Any] = await result_of(settings, job)
    samples = parse_samples(generate_latest(worker.ctx["metrics"].registry).decode())
    return result, value(samples, "skillet_skill_intent_matches_total")


async def _turn(settings: Settings, org: uuid.UUID, text: str) -> dict[str, Any]:
    return (await _turn_and_intent_matches(settings, org, text))[0]


async def _reply(db: asyncpg.Connection, inbound_id: str) -> str:
    body: str = await db.fetchval(
        "select body from messages where reply_to_id = $1", uuid.UUID(inbound_id)
    )
    return body


async def _org_with_catalog(db: asyncpg.Connection, resources: Resources) -> uuid.UUID:
    await seed_catalog(db, resources.store, DEFAULT_CATALOG_DIR)
    org = await create_org(db, "Clínica Sorriso")
    await insert_agent(db, org, "Bia", "Você é a Bia, recepcionista da Clínica Sorriso.")
    for name in ("agendamento", "objecao-preco"):
        await install_catalog_skill(db, resources.store, organization_id=org, name=name)
    return org


async def test_customers_phrases_activate_the_installed_catalog_skills(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org_with_catalog(db, resources)
    cases = {
        "Oi, queria marcar uma consulta pra amanhã de manhã": "agendamento",
        "Preciso remarcar meu horário de quinta": "agendamento",
        "Nossa, achei muito caro. Tem desconto no Pix?": "objecao-preco",
        "Vi mais barato em outra loja": "objecao-preco",
    }
    for text, expected in cases.items():
        result = await _turn(settings, org, text)
        assert [m["name"] for m in result["matched"]] == [expected], text
        assert result["tools"] == ["read_skill_reference"]


async def test_customize_is_served_by_the_next_turn_and_uninstall_removes_it(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org_with_catalog(db, resources)
    text = "Oi, tem horário disponível na sexta?"

    before = await _turn(settings, org, text)
    [forked] = before["matched"]
    assert "Checklist de dados" in await _reply(db, before["inbound_id"])

    custom = skill_zip(
        "agendamento",
        keywords=["horário", "consulta"],
        body="Agendamos pelo WhatsApp com a recepção da Clínica Sorriso.",
        references={"checklist-e-mensagens.md": CUSTOM_CHECKLIST},
    )
    imported = await import_skill_package(db, resources.store, organization_id=org, data=custom)

    after = await _turn(settings, org, text)
    assert after["matched"] == [{"name": "agendamento", "version_id": str(imported.version_id)}]
    assert after["tools"] == ["read_skill_reference"]
    reply = await _reply(db, after["inbound_id"])
    assert reply.startswith("Agendamos pelo WhatsApp")
    assert "Clínica Sorriso: agenda de segunda a sexta" in reply

    rows = await db.fetch(
        "select skill_version_id from skill_activations "
        "where organization_id = $1 and skill_name = 'agendamento' and trigger = 'hard' "
        "order by created_at, id",
        org,
    )
    assert [str(r["skill_version_id"]) for r in rows] == [
        forked["version_id"],
        str(imported.version_id),
    ]

    await uninstall_skill(db, organization_id=org, name="agendamento")
    gone = await _turn(settings, org, text)
    assert gone["matched"] == [] and gone["tools"] == []
    assert await _reply(db, gone["inbound_id"]) == NO_SKILL_REPLY


async def test_the_catalog_intent_model_answers_what_keywords_miss_until_keywords_are_edited(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _org_with_catalog(db, resources)
    text = "faz 3x?"  # a price objection no catalog keyword matches

    before, by_model = await _turn_and_intent_matches(settings, org, text)
    [injected] = before["matched"]
    assert injected["name"] == "objecao-preco" and by_model == 1
    # Recorded apart from keyword matches: the business sees the classifier decided.
    raw = await db.fetch(
        "select skill_version_id, trigger from skill_activations where organization_id = $1",
        org,
    )
    assert [(str(r["skill_version_id"]), r["trigger"]) for r in raw] == [
        (injected["version_id"], "intent")
    ]
    daily = await db.fetchrow(
        "select hard_count, intent_count from skill_activation_daily "
        "where organization_id = $1 and skill_name = 'objecao-preco'",
        org,
    )
    assert dict(daily) == {"hard_count": 0, "intent_count": 1}
    usage = "select use_count from skill_usage where organization_id = $1 and skill_name = $2"
    assert await db.fetchval(usage, org, "objecao-preco") == 1  # a use, for the curator too
    assert (await _reply(db, before["inbound_id"])).startswith("Objeção de preço: acolha")

    # The business's own keywords decide alone once it edits them.
    own = skill_zip("objecao-preco", keywords=["desconto"], body="Desconto só no Pix.")
    await import_skill_package(db, resources.store, organization_id=org, data=own)
    after, by_model = await _turn_and_intent_matches(settings, org, text)
    assert after["matched"] == [] and by_model == 0
    assert await _reply(db, after["inbound_id"]) == NO_SKILL_REPLY
