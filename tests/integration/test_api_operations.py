"""The org's operations through the admin API: pagination, conversations, dead letters and
their requeue, agents, numbers and settings."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio
from arq.jobs import Job, JobStatus

from api.keys import Role
from jobs import serialization
from tests.integration.api_support import ApiClient, audit_rows, create_key, running_api
from tests.integration.support import create_org, enqueue, payload, result_of, run_burst
from turn.agent_queries import create_agent
from worker.resources import Resources
from worker.settings import Settings

DRAFTS = 120


@pytest_asyncio.fixture(loop_scope="session")
async def api(
    settings: Settings, resources: Resources, whatsapp_settings: Settings
) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, prove_with=whatsapp_settings) as client:
        yield client


async def _many_drafts(db: asyncpg.Connection, org: uuid.UUID, count: int) -> None:
    """`count` pending drafts written in one statement: every updated_at is the same, so the
    cursor's tie-break on id is what keeps pages apart."""
    await db.execute(
        """with v as (
               insert into skill_versions (organization_id, name, description, body, created_by)
               select $1, 'rascunho-' || g, 'd', 'b', 'agent' from generate_series(1, $2) g
               returning id, name)
           insert into skill_drafts (id, organization_id, name, version_id)
           select gen_random_uuid(), $1, name, id from v""",
        org,
        count,
    )


async def test_pagination_walks_120_drafts_and_120_audit_rows_without_gaps_or_repeats(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    key = await create_key(db, org, Role.VIEWER)
    await _many_drafts(db, org, DRAFTS)
    pages = await api.walk("/v1/drafts", key, limit=7)
    assert [len(p) for p in pages] == [7] * 17 + [1]
    ids = [d["draft_id"] for page in pages for d in page]
    assert len(ids) == len(set(ids)) == DRAFTS
    expected = await db.fetch(
        "select id from skill_drafts where organization_id = $1 order by updated_at desc, id desc",
        org,
    )
    assert ids == [str(r["id"]) for r in expected]

    await db.execute(
        "insert into audit_log (organization_id, actor, action) "
        "select $1, 'test', 'skill.pin' from generate_series(1, $2)",
        org,
        DRAFTS,
    )
    audit = [e["id"] for page in await api.walk("/v1/audit", key, limit=50) for e in page]
    assert audit == sorted(audit, reverse=True) and len(set(audit)) == DRAFTS
    # Exactly one page: no empty page after it.
    assert len(await api.walk("/v1/audit", key, limit=DRAFTS)) == 1

    # Short lists read whole (agents, numbers, keys, catalog) page the same way.
    for n in range(5):
        await create_agent(db, org, name=f"Agente {n}", system_prompt="Persona.")
    agents = await api.walk("/v1/agents", key, limit=2)
    assert [[a["name"] for a in page] for page in agents] == [
        ["Agente 0", "Agente 1"],
        ["Agente 2", "Agente 3"],
        ["Agente 4"],
    ]

    first = await api.get("/v1/drafts?limit=2", key)
    foreign = await api.get(f"/v1/audit?cursor={first.body['next']}", key)
    assert (foreign.status, foreign.code) == (400, "invalid_cursor")
    for query in (
        "cursor=%%%",
        "cursor=bm9wZQ",
        "limit=0",
        "limit=201",
        "limit=x",
        "limit=²",
        "limit=٣",
    ):
        refused = await api.get(f"/v1/drafts?{query}", key)
        assert refused.status == 400 and refused.code in {"invalid_cursor", "invalid_limit"}


async def test_conversations_and_their_messages_with_delivery(
    api: ApiClient, db: asyncpg.Connection, settings: Settings, resources: Resources
) -> None:
    org = await create_org(db)
    await create_agent(db, org, name="Atendente", system_prompt="Você atende a loja.")
    key = await create_key(db, org, Role.VIEWER)
    await enqueue(settings, payload(org, "m1", "oi, tudo bem?", contact="5511988887777"))
    await run_burst(settings)
    [conversation] = (await api.get("/v1/conversations", key)).body["items"]
    assert conversation["contact_id"] == "5511988887777"
    messages = (await api.get(f"/v1/conversations/{conversation['id']}/messages", key)).body
    inbound, reply = messages["items"]
    assert (inbound["direction"], inbound["body"], inbound["answered_by"]) == (
        "inbound",
        "oi, tudo bem?",
        reply["id"],
    )
    assert reply["direction"] == "outbound" and reply["delivery"]["status"] == "sent"
    for bad in (str(uuid.uuid4()), "nao-e-uuid"):
        missing = await api.get(f"/v1/conversations/{bad}/messages", key)
        assert (missing.status, missing.code) == (404, "conversation_not_found")


async def test_a_dead_letter_is_listed_fixed_and_requeued_to_a_reply(
    api: ApiClient, db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    # An agent on a provider without its key: the turn fails for good (model_not_configured).
    agent = await create_agent(
        db, org, name="A", system_prompt="Persona.", model_provider="anthropic", model_name="m"
    )
    admin = await create_key(db, org, Role.ADMIN)
    [job_id] = await enqueue(settings, payload(org, "m1", "qual o prazo?"))
    await run_burst(settings)
    assert (await result_of(settings, job_id))["code"] == "model_not_configured"
    await db.execute(  # an operator's row: no org, never shown to one
        "insert into dead_letters (job_id, function, payload, error_code, error, tries) "
        "values ('x', 'handle_inbound_message', '{}', 'invalid_payload', 'x', 1)"
    )
    [letter] = (await api.get("/v1/dead-letters", admin)).body["items"]
    assert (letter["error_code"], letter["requeued_at"]) == ("model_not_configured", None)

    fixed = await api.call(
        "PATCH", f"/v1/agents/{agent.id}", admin, json_body={"default_model": True}
    )
    assert fixed.status == 200 and fixed.body["model_provider"] is None
    requeued = await api.call("POST", f"/v1/dead-letters/{letter['id']}/requeue", admin)
    assert requeued.status == 200, requeued.body
    job = Job(
        requeued.body["job_id"],
        api.deps.queue,
        _queue_name=settings.queue_name,
        _deserializer=serialization.loads,
    )
    assert await job.status() in (JobStatus.queued, JobStatus.deferred)
    twice = await api.call("POST", f"/v1/dead-letters/{letter['id']}/requeue", admin)
    assert (twice.status, twice.code) == (409, "dead_letter_already_requeued")

    await run_burst(settings)
    assert (await job.result(timeout=5))["status"] == "replied"
    replies = await db.fetchval(
        "select count(*) from messages where organization_id = $1 and direction = 'outbound'", org
    )
    assert replies == 1
    actions = [(r["action"], r["outcome"]) for r in await audit_rows(db, org)]
    assert actions == [
        ("agent.update", "ok"),
        ("dead_letter.requeue", "ok"),
        ("dead_letter.requeue", "refused"),
    ]


async def test_agents_numbers_and_settings_are_an_admins(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    agent = await create_agent(db, org, name="Atendente", system_prompt="Persona.")
    admin = await create_key(db, org, Role.ADMIN)

    assert (await api.get("/v1/settings", admin)).body["agent_authoring"] == "review"
    changed = await api.call("PATCH", "/v1/settings", admin, json_body={"agent_authoring": "off"})
    assert (changed.body["previous"], changed.body["agent_authoring"]) == ("review", "off")
    invalid_mode = await api.call(
        "PATCH", "/v1/settings", admin, json_body={"agent_authoring": "x"}
    )
    assert (invalid_mode.status, invalid_mode.code) == (422, "invalid_input")
    broken = await api.call(
        "PATCH", "/v1/settings", admin, data=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert (broken.status, broken.code) == (400, "invalid_json")

    for body, code in (
        ({}, "nothing_to_change"),
        ({"model_provider": "gemini", "model_name": "x"}, "invalid_model"),
        ({"model_provider": "openai"}, "invalid_model"),
        ({"model_name": "gpt-4.1"}, "invalid_model"),
        ({"name": "  "}, "invalid_name"),
    ):
        refused = await api.call("PATCH", f"/v1/agents/{agent.id}", admin, json_body=body)
        assert (refused.status, refused.code) == (422, code), body
    updated = await api.call(
        "PATCH",
        f"/v1/agents/{agent.id}",
        admin,
        json_body={"system_prompt": "Nova persona.", "model_provider": "openai", "model_name": "m"},
    )
    assert (updated.body["system_prompt"], updated.body["model_name"]) == ("Nova persona.", "m")
    [listed] = (await api.get("/v1/agents", admin)).body["items"]
    assert listed["model_provider"] == "openai"

    added = await api.call(
        "POST",
        "/v1/channels",
        admin,
        json_body={"kind": "cloud_api", "address": "123456", "agent_id": str(agent.id)},
    )
    assert added.status == 201 and added.body["agent_id"] == str(agent.id)
    taken = await api.call(
        "POST", "/v1/channels", admin, json_body={"kind": "cloud_api", "address": "123456"}
    )
    assert (taken.status, taken.code) == (409, "channel_exists")
    bad = await api.call(
        "POST", "/v1/channels", admin, json_body={"kind": "waha", "address": "a b"}
    )
    assert (bad.status, bad.code) == (422, "invalid_address")
    cleared = await api.call(
        "PATCH", "/v1/channels/cloud_api/123456", admin, json_body={"agent_id": None}
    )
    assert cleared.status == 200 and cleared.body["agent_id"] is None
    nothing = await api.call("PATCH", "/v1/channels/cloud_api/123456", admin, json_body={})
    assert (nothing.status, nothing.code) == (422, "nothing_to_change")
    [number] = (await api.get("/v1/channels", admin)).body["items"]
    assert (number["address"], number["agent_id"]) == ("123456", None)

    trail = [
        (r["action"], r["outcome"], r["detail"].get("code")) for r in await audit_rows(db, org)
    ]
    assert trail == [
        ("settings.agent_authoring", "ok", None),
        ("settings.agent_authoring", "refused", "invalid_input"),
        ("settings.agent_authoring", "refused", "invalid_json"),
        *[
            ("agent.update", "refused", c)
            for c in (
                "nothing_to_change",
                "invalid_model",
                "invalid_model",
                "invalid_model",
                "invalid_name",
            )
        ],
        ("agent.update", "ok", None),
        ("channel.add", "ok", None),
        ("channel.add", "refused", "channel_exists"),
        ("channel.add", "refused", "invalid_address"),
        ("channel.update", "ok", None),
        ("channel.update", "refused", "nothing_to_change"),
    ]
