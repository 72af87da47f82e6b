"""The model's rewrite of an umbrella's body, against fake OpenAI and Anthropic servers on
127.0.0.1 speaking their wire formats: a good rewrite is the proposal's body; a rewrite that
drops a keyword, is too long, cites a file the package lacks, brings its own frontmatter,
times out or is garbage keeps the deterministic body and says why; temperature 0 is sent."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import asyncpg
import pytest
from pydantic import SecretStr

from consolidation.distill import SECTION
from consolidation.proposal_queries import fetch_proposal, fetch_version
from consolidation.run import ConsolidationReport
from skills.catalog_queries import catalog_lock_key
from tests.integration.test_consolidation import EAGER, _consolidate, _org
from tests.model_fakes import Answer, FakeAnthropic, FakeOpenAI
from turn.agent_queries import create_agent
from worker.model_providers import build_model_registry
from worker.resources import Resources
from worker.settings import Settings

KEY = "sk-openai-test-key"
ANTHROPIC_KEY = "sk-ant-test-key"
# Every keyword of the group (trocar-produto's, then the absorbed skills'), and a file the
# merged package holds.
GOOD = """# Troca de produto

Use para troca, troca de produto, trocar produto e a política de troca da loja.

1. A troca do produto vale por 30 dias, com a nota fiscal e o produto sem uso.
2. Para os prazos detalhados, leia references/politica-de-troca/prazos.md."""


def _openai_answer(text: str) -> Answer:
    return Answer(
        body={
            "id": "chatcmpl-rewrite",
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
        }
    )


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(KEY)
    await fake.start()
    yield fake
    await fake.close()


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic(ANTHROPIC_KEY)
    await fake.start()
    yield fake
    await fake.close()


async def _run(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    *,
    provider: str | None = "openai",
    **config: Any,
) -> tuple[ConsolidationReport, str, str]:
    """One cycle of an org whose agent is on `provider`: the report, the proposal's
    `rewrite` and the proposed umbrella's body."""
    org = await _org(db, resources.store)
    await create_agent(
        db,
        org,
        name="Atendente",
        system_prompt="Você atende a loja.",
        model_provider=provider,
        model_name=None if provider in (None, "local") else "model-test",
    )
    models = build_model_registry(settings, http)
    eager = dataclasses.replace(EAGER, models=models, **config)
    report = await _consolidate(db, resources.store, org, config=eager)
    [summary] = report.proposals
    assert summary.id is not None
    proposal = await fetch_proposal(db, org, summary.id)
    assert proposal is not None and proposal.rewrite == summary.rewrite
    version = await fetch_version(db, proposal.version_id)
    assert version is not None
    return report, proposal.rewrite, version.body


def _on_openai(settings: Settings, fake: FakeOpenAI) -> Settings:
    return settings.model_copy(
        update={"openai_base_url": f"{fake.base_url}/v1", "openai_api_key": SecretStr(KEY)}
    )


async def test_a_good_rewrite_is_the_proposals_body_and_was_asked_at_temperature_0(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script.append(_openai_answer(f"```markdown\n{GOOD}\n```"))
    report, rewrite, body = await _run(db, resources, _on_openai(settings, fake_openai), http)
    assert rewrite == "model"
    assert body == GOOD  # the fence a model likes to add is dropped
    assert report.to_json()["proposals"][0]["rewrite"] == "model"
    [request] = fake_openai.received
    assert request.body["temperature"] == 0
    prompt = request.body["messages"][0]["content"]
    assert '"política de troca"' in prompt and "references/politica-de-troca/prazos.md" in prompt
    # Each member's instructions reach the model.
    assert "Troca de produto em até 30 dias" in request.body["messages"][1]["content"]


async def test_an_anthropic_agent_rewrites_too(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_anthropic: FakeAnthropic,
) -> None:
    fake_anthropic.script.append(
        Answer(
            body={
                "id": "msg_rewrite",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "text", "text": GOOD}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 100, "output_tokens": 50},
            }
        )
    )
    on_anthropic = settings.model_copy(
        update={
            "anthropic_base_url": fake_anthropic.base_url,
            "anthropic_api_key": SecretStr(ANTHROPIC_KEY),
        }
    )
    _, rewrite, body = await _run(db, resources, on_anthropic, http, provider="anthropic")
    assert (rewrite, body) == ("model", GOOD)
    [request] = fake_anthropic.received
    assert request.body["temperature"] == 0


TOO_MANY_LINES = GOOD + "\n" + "\n".join(f"- passo {i}" for i in range(250))
TOO_MANY_BYTES = GOOD + "\n" + "troca " * 4_000
BAD = [
    (GOOD.replace("e a política de troca", "e as regras"), "rejected: dropped_keyword política"),
    (TOO_MANY_LINES, "rejected: too_large"),
    (TOO_MANY_BYTES, "rejected: too_long"),
    (GOOD + "\nVeja references/garantia/SKILL.md.", "rejected: unknown_file references/garantia"),
    ("---\nname: outra-skill\n---\n" + GOOD, "rejected: frontmatter"),
    ("", "rejected: empty"),
]


@pytest.mark.parametrize(("text", "why"), BAD, ids=[w.split(" ")[1] for _, w in BAD])
async def test_a_rewrite_that_breaks_a_rule_keeps_the_deterministic_body(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
    text: str,
    why: str,
) -> None:
    fake_openai.script.append(_openai_answer(text))
    _, rewrite, body = await _run(db, resources, _on_openai(settings, fake_openai), http)
    assert rewrite.startswith(why)
    assert SECTION in body and body != GOOD  # the deterministic umbrella body


async def test_a_slow_model_times_out_and_a_garbage_answer_is_refused(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
) -> None:
    on_openai = _on_openai(settings, fake_openai)
    fake_openai.script.append(Answer(delay_s=5.0, body=_openai_answer(GOOD).body))
    _, rewrite, body = await _run(db, resources, on_openai, http, rewrite_timeout_s=0.3)
    assert rewrite == "rejected: timeout" and SECTION in body

    fake_openai.script.append(Answer(body=b"\x00\xff<html>not json", status=200))
    _, rewrite, body = await _run(db, resources, on_openai, http)
    assert rewrite.startswith("rejected: model_error") and SECTION in body


@pytest.mark.parametrize("provider", [None, "local"])
async def test_without_a_real_model_nothing_is_asked(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
    provider: str | None,
) -> None:
    on_openai = _on_openai(settings, fake_openai)
    _, rewrite, body = await _run(db, resources, on_openai, http, provider=provider)
    assert rewrite == "kept_deterministic" and SECTION in body
    assert fake_openai.received == []


async def test_the_budget_bounds_the_cycles_calls(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
) -> None:
    # A spent budget asks nothing: the deterministic body stands without a call.
    on_openai = _on_openai(settings, fake_openai)
    _, rewrite, _ = await _run(db, resources, on_openai, http, rewrite_budget_s=0.0)
    assert rewrite == "kept_deterministic" and fake_openai.received == []


async def test_authoring_is_not_held_up_while_the_model_writes(
    db: asyncpg.Connection,
    resources: Resources,
    settings: Settings,
    http: aiohttp.ClientSession,
    fake_openai: FakeOpenAI,
) -> None:
    # The model answers after 5 s: the lock below is taken well within that on any machine.
    fake_openai.script.append(Answer(delay_s=5.0, body=_openai_answer(GOOD).body))
    org = await _org(db, resources.store)
    await create_agent(
        db, org, name="A", system_prompt="p", model_provider="openai", model_name="model-test"
    )
    models = build_model_registry(_on_openai(settings, fake_openai), http)
    config = dataclasses.replace(EAGER, models=models)
    cycle = asyncio.create_task(_consolidate(db, resources.store, org, config=config))
    # The fake has no hook for "a request arrived": poll its record.
    while not fake_openai.received and not cycle.done():  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    assert not cycle.done()  # the model is still writing
    # The lock skill_manage takes before it writes is free while the call is pending (tried,
    # not waited for: held by the cycle, this would say false at once).
    async with resources.pool.acquire() as other:
        key = catalog_lock_key(org)
        assert await other.fetchval("select pg_try_advisory_lock($1)", key) is True
        assert not cycle.done()
        await other.execute("select pg_advisory_unlock($1)", key)
    report = await cycle
    assert [p.rewrite for p in report.proposals] == ["model"]
