"""Turns of an agent configured for a provider, through a real arq worker, Postgres, Redis
and S3, against a local server speaking Anthropic's Messages API."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from tests.integration.support import create_org, enqueue, payload, publish, result_of, run_burst
from tests.model_fakes import FakeAnthropic
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

KEY = "sk-ant-api03-chave-do-teste-e2e"
PERSONA = "Você é a Bia, da Loja Teste."
PRAZOS = "Boletos vencidos há até 30 dias são reemitidos sem custo.\nDepois: multa de 2%."


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic(KEY)
    await fake.start()
    yield fake
    await fake.close()


async def _seed(db: asyncpg.Connection, resources: Resources, provider: str) -> uuid.UUID:
    org = await create_org(db)
    agent = await insert_agent(db, org, "Bia", PERSONA)
    await db.execute(
        "update agents set model_provider = $2, model_name = 'claude-test' where id = $1",
        agent,
        provider,
    )
    await publish(
        db,
        resources.store,
        org,
        "segunda-via",
        keywords=["segunda via", "boleto"],
        body="Envio a segunda via pelo link seguro.",
        references={"references/prazos.md": PRAZOS},
    )
    await publish(db, resources.store, org, "frete", keywords=["frete"], body="Frete grátis.")
    return org


async def test_an_agent_on_anthropic_answers_through_it_with_cache_accounting(
    settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_anthropic: FakeAnthropic,
) -> None:
    org = await _seed(db, resources, "anthropic")
    on_anthropic = settings.model_copy(
        update={"anthropic_base_url": fake_anthropic.base_url, "anthropic_api_key": SecretStr(KEY)}
    )
    [first] = await enqueue(on_anthropic, payload(org, "m1", "Preciso da segunda via do boleto"))
    with capture_logs() as logs:
        await run_burst(on_anthropic)  # no model override: the agent's provider answers
    [second] = await enqueue(on_anthropic, payload(org, "m2", "Vocês cobram frete?"))
    await run_burst(on_anthropic)

    one, two = await result_of(on_anthropic, first), await result_of(on_anthropic, second)
    assert one["status"] == two["status"] == "replied"
    assert one["tools"] == ["read_skill_reference"]
    # Three requests (tool use, answer, then the second turn), one cached prefix for all.
    requests = [r.body for r in fake_anthropic.received]
    assert len(requests) == 3
    prefixes = {r["system"][0]["text"] for r in requests}
    assert len(prefixes) == 1
    prefix = prefixes.pop()
    assert hashlib.sha256(prefix.encode()).hexdigest() == one["prefix_sha256"]
    assert one["prefix_sha256"] == two["prefix_sha256"]
    assert prefix.startswith(PERSONA)
    assert all(r["system"][0]["cache_control"] == {"type": "ephemeral"} for r in requests)
    assert "Envio a segunda via" in requests[0]["system"][1]["text"]
    assert "Frete grátis" in requests[2]["system"][1]["text"]
    assert requests[1]["messages"][-1]["content"][0]["content"] == PRAZOS

    assert one["usage"]["provider"] == "anthropic"
    assert one["usage"]["model"] == "claude-test"
    assert one["usage"]["calls"] == 2
    write = one["usage"]["cache_write_tokens"]
    assert write > 0
    assert one["usage"]["cache_read_tokens"] == write  # the tool step re-read it
    assert two["usage"]["cache_write_tokens"] == 0
    assert two["usage"]["cache_read_tokens"] == write
    assert two["usage"]["latency_ms"] >= 0

    rows = await db.fetch(
        "select o.body from outbox o where o.organization_id = $1 order by o.created_at", org
    )
    assert rows[0]["body"] == f"Segundo a referência: {PRAZOS.splitlines()[0]}"
    finished = [e for e in logs if e["event"] == "turn.finished"]
    assert finished and finished[0]["usage"]["cache_write_tokens"] == write
    assert finished[0]["prefix_sha256"] == one["prefix_sha256"]
    assert KEY not in repr(logs)


async def test_an_agent_on_a_provider_without_credentials_fails_naming_the_variable(
    settings: Settings,
    db: asyncpg.Connection,
    resources: Resources,
    fake_anthropic: FakeAnthropic,
) -> None:
    org = await _seed(db, resources, "anthropic")
    no_key = settings.model_copy(update={"anthropic_base_url": fake_anthropic.base_url})
    [job] = await enqueue(no_key, payload(org, "m1", "Preciso da segunda via do boleto"))
    await run_burst(no_key)

    assert await result_of(no_key, job) == {"status": "failed", "code": "model_not_configured"}
    [dead] = await db.fetch("select error_code, error from dead_letters")
    assert dead["error_code"] == "model_not_configured"
    assert "SKILLET_ANTHROPIC_API_KEY" in dead["error"]
    assert fake_anthropic.received == []
    assert await db.fetchval("select count(*) from outbox where organization_id = $1", org) == 0


async def test_an_unknown_provider_is_refused_by_name(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await _seed(db, resources, "gemini")
    [job] = await enqueue(settings, payload(org, "m1", "Oi"))
    await run_burst(settings)
    assert await result_of(settings, job) == {"status": "failed", "code": "model_not_configured"}
    error = await db.fetchval("select error from dead_letters")
    assert "'gemini'" in error and "anthropic, local, openai" in error


async def test_the_agents_model_columns_are_checked(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    agent = await insert_agent(db, org, "Bia", PERSONA)
    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute("update agents set model_name = 'claude-x' where id = $1", agent)
    with pytest.raises(asyncpg.CheckViolationError):
        await db.execute("update agents set model_provider = 'Anthropic!' where id = $1", agent)
