"""The inbound-message turn through a real arq worker on real Postgres, Redis and S3."""

from __future__ import annotations

import json
import uuid

import asyncpg
import pytest
from redis.asyncio import Redis

from inbox.errors import UnknownOrganization
from jobs.payloads import HANDLE_INBOUND_MESSAGE
from tests.integration.support import (
    create_org,
    enqueue,
    enqueue_raw,
    job_id_of,
    payload,
    publish,
    result_of,
    run_burst,
    wake_raw,
)
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

PRAZOS = "Boletos vencidos há até 30 dias são reemitidos sem custo.\nDepois: multa de 2%."


async def _seed(
    db: asyncpg.Connection, resources: Resources
) -> tuple[uuid.UUID, dict[str, uuid.UUID]]:
    org = await create_org(db)
    await insert_agent(db, org, "Bia", "Você é a Bia, da Loja Teste.")
    versions = {
        "segunda-via": await publish(
            db,
            resources.store,
            org,
            "segunda-via",
            keywords=["segunda via", "boleto"],
            probes=["pagamento"],
            body="Envio a segunda via pelo link seguro.",
            references={"references/prazos.md": PRAZOS},
        ),
        "frete": await publish(
            db,
            resources.store,
            org,
            "frete",
            keywords=["frete", "cep"],
            probes=["rastreio"],
            body="Frete grátis acima de R$ 199.",
        ),
    }
    return org, versions


async def _outbox(db: asyncpg.Connection, org: uuid.UUID) -> list[asyncpg.Record]:
    return await db.fetch(
        """select i.external_id, o.body, o.status from outbox o
           join messages r on r.id = o.message_id join messages i on i.id = r.reply_to_id
           where o.organization_id = $1 order by i.created_at""",
        org,
    )


async def test_turn_replies_with_matched_skill_and_its_reference(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, versions = await _seed(db, resources)
    [job] = await enqueue(settings, payload(org, "m1", "Preciso da SEGUNDA VIA do boleto"))
    await run_burst(settings)

    result = await result_of(settings, job)
    assert result["status"] == "replied"
    assert result["matched"] == [
        {"name": "segunda-via", "version_id": str(versions["segunda-via"])}
    ]
    assert result["tools"] == ["read_skill_reference"]
    [row] = await _outbox(db, org)
    assert row["status"] == "sent"
    assert "Envio a segunda via" in row["body"]
    assert "reemitidos sem custo" in row["body"]  # came from the S3 reference


async def test_prefix_identical_across_turns_whatever_matched(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, _ = await _seed(db, resources)
    jobs = await enqueue(
        settings,
        payload(org, "a", "segunda via do boleto"),
        payload(org, "b", "qual o frete pro meu cep?"),
        payload(org, "c", "bom dia"),
        payload(org, "d", "meu pagamento caiu?"),
    )
    await run_burst(settings)
    results = [await result_of(settings, j) for j in jobs]
    assert [r["status"] for r in results] == ["replied"] * 4
    assert len({r["prefix_sha256"] for r in results}) == 1
    assert [m["name"] for m in results[1]["matched"]] == ["frete"]
    assert results[2]["matched"] == [] and results[2]["probes"] == []
    assert results[3]["matched"] == [] and results[3]["probes"] == ["segunda-via"]


async def test_activation_rows_recorded_for_hard_matches_and_probes(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, versions = await _seed(db, resources)
    await enqueue(
        settings,
        payload(org, "a", "segunda via e frete, por favor"),
        payload(org, "b", "cadê o rastreio?"),
    )
    worker = await run_burst(settings)
    assert worker.jobs_complete == 2
    rows = await db.fetch(
        "select skill_name, skill_version_id, trigger, job_id from skill_activations "
        "where organization_id = $1 order by skill_name, trigger",
        org,
    )
    got = [(r["skill_name"], r["skill_version_id"], r["trigger"]) for r in rows]
    assert got == [
        ("frete", versions["frete"], "hard"),
        ("frete", None, "probe"),
        ("segunda-via", versions["segunda-via"], "hard"),
    ]
    assert all(r["job_id"].startswith("inbound:") for r in rows)


async def test_duplicate_delivery_is_answered_once_queued_or_done(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, _ = await _seed(db, resources)
    first, queued_again = await enqueue(
        settings, payload(org, "dup", "segunda via"), payload(org, "dup", "segunda via")
    )
    assert first is not None and queued_again is None  # refused while queued
    await run_burst(settings)
    # Delivered again after it was answered: found stored and answered, so no job at all.
    assert await enqueue(settings, payload(org, "dup", "segunda via")) == [None]
    await run_burst(settings)
    assert len(await _outbox(db, org)) == 1
    inbound = await db.fetchval(
        "select count(*) from messages where organization_id = $1 and direction = 'inbound'", org
    )
    assert inbound == 1


async def test_concurrent_runs_of_one_message_reply_once(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, _ = await _seed(db, resources)
    message = payload(org, "race", "frete para o cep 01310")
    for _ in range(4):  # stored once, its conversation woken four times (distinct job ids)
        await wake_raw(settings, message)
    worker = await run_burst(settings.model_copy(update={"max_jobs": 4}))
    assert worker.jobs_complete == 4
    assert len(await _outbox(db, org)) == 1


async def test_jobs_travel_as_json_not_pickle(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org, _ = await _seed(db, resources)
    message = payload(org, "json", "oi")
    await enqueue(settings, message)
    client = Redis.from_url(settings.redis_url)
    try:
        raw = await client.get(f"arq:job:{job_id_of(message)}")
    finally:
        await client.aclose()
    job = json.loads(raw)
    assert job["f"] == HANDLE_INBOUND_MESSAGE
    assert job["a"][0]["message_id"] == "json"
    await run_burst(settings)


async def test_invalid_payload_and_unknown_org_go_to_dead_letters(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    bad = await enqueue_raw(settings, {"organization_id": "nope"})
    # The previous release's job shape (the message itself) is no job any more.
    old = await enqueue_raw(settings, payload(uuid.uuid4(), "x", "oi").model_dump(mode="json"))
    with pytest.raises(UnknownOrganization):  # refused where it would be stored, no job
        await enqueue(settings, payload(uuid.uuid4(), "y", "oi"))
    worker = await run_burst(settings)
    assert worker.jobs_retried == 0
    assert (await result_of(settings, bad))["code"] == "invalid_payload"
    assert (await result_of(settings, old))["code"] == "invalid_payload"
    rows = await db.fetch("select error_code, organization_id from dead_letters order by 1")
    # An unreadable payload names no org anyone could trust.
    assert [tuple(r) for r in rows] == [("invalid_payload", None), ("invalid_payload", None)]
    assert await db.fetchval("select count(*) from outbox") == 0
