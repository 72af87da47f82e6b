"""`GET /v1/usage/tokens`: an org's model costs per UTC day, agent and model from the daily
rollup the reply commit writes, summed right, never another org's, bounded in days and rows."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from api import usage_routes
from api.keys import Role
from tests.integration.api_support import ApiClient, create_key, record_turn_usage, running_api
from tests.integration.support import create_org
from turn.agent_queries import insert_agent
from worker.resources import Resources
from worker.settings import Settings

NOW = datetime(2025, 3, 31, 23, 30, tzinfo=UTC)  # late in the UTC day: no day rolls over
COUNTS = (
    "turns",
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "unreported_turns",
)


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store, clock=lambda: NOW) as client:
        yield client


async def turn(
    db: asyncpg.Connection,
    org: uuid.UUID,
    agent: uuid.UUID | None,
    model: str,
    days_ago: int,
    tokens: tuple[int, int, int, int] | None,
    *,
    provider: str = "openai",
    calls: int = 1,
) -> None:
    at = NOW - timedelta(days=days_ago, hours=1)
    await record_turn_usage(db, org, agent, provider, model, at, tokens, calls=calls)


def _sums(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, int]]:
    """The oracle: the items summed per provider and model, as the totals must be."""
    sums: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        total = sums.setdefault((row["provider"], row["model"]), dict.fromkeys(COUNTS, 0))
        for name in COUNTS:
            total[name] += row[name]
    return sums


def _row(day: str, agent: uuid.UUID | None, name: str | None, model: str, *n: int) -> Any:
    provider = "anthropic" if model.startswith("claude") else "openai"
    return {
        "day": day,
        "agent_id": None if agent is None else str(agent),
        "agent_name": name,
        "provider": provider,
        "model": model,
        **dict(zip(COUNTS, n, strict=True)),
    }


def _total(provider: str, model: str, *n: int) -> Any:
    return {"provider": provider, "model": model, **dict(zip(COUNTS, n, strict=True))}


async def test_rows_per_day_agent_and_model_and_totals_per_model(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org, other = await create_org(db, "Padaria"), await create_org(db, "Concorrente")
    sales = await insert_agent(db, org, "Vendas", "Você vende.")
    support = await insert_agent(db, org, "Suporte", "Você ajuda.")
    theirs = await insert_agent(db, other, "Deles", "Outra empresa.")
    await turn(db, org, sales, "gpt-x", 0, (100, 7, 80, 0))
    await turn(db, org, sales, "gpt-x", 0, (50, 3, 0, 20), calls=2)
    await turn(db, org, support, "claude-y", 0, (1000, 40, 900, 100), provider="anthropic")
    await turn(db, org, sales, "gpt-x", 1, (10, 1, 0, 0))
    await turn(db, org, sales, "gpt-x", 1, None)  # no count: a turn, no tokens
    await turn(db, org, None, "gpt-x", 1, (5, 5, 0, 0))  # answered without an agent row
    await turn(db, org, support, "gpt-x", 29, (7, 2, 0, 0))  # the window's first day
    await turn(db, org, sales, "gpt-x", 30, (9000, 900, 0, 0))  # a day before it
    await turn(db, org, sales, "gpt-x", -1, (8000, 800, 0, 0))  # tomorrow (a skewed clock)
    await turn(db, other, theirs, "modelo-da-outra", 0, (555, 55, 5, 5))
    await turn(db, other, theirs, "gpt-x", 1, (777, 77, 7, 7))
    key = await create_key(db, org, Role.VIEWER)

    answer = await api.get("/v1/usage/tokens", key)
    assert answer.status == 200, answer.body
    body = answer.body
    assert (body["today"], body["from"], body["days"]) == ("2025-03-31", "2025-03-02", 30)
    assert (body["agent_id"], body["truncated"]) == (None, False)
    assert body["items"] == [
        _row("2025-03-31", support, "Suporte", "claude-y", 1, 1, 1000, 40, 900, 100, 0),
        _row("2025-03-31", sales, "Vendas", "gpt-x", 2, 3, 150, 10, 80, 20, 0),
        _row("2025-03-30", None, None, "gpt-x", 1, 1, 5, 5, 0, 0, 0),
        _row("2025-03-30", sales, "Vendas", "gpt-x", 2, 2, 10, 1, 0, 0, 1),
        _row("2025-03-02", support, "Suporte", "gpt-x", 1, 1, 7, 2, 0, 0, 0),
    ]
    assert body["totals"] == [
        _total("anthropic", "claude-y", 1, 1, 1000, 40, 900, 100, 0),
        _total("openai", "gpt-x", 6, 7, 172, 18, 80, 20, 1),
    ]
    oracle = _sums(body["items"])
    assert {
        (t["provider"], t["model"]): {c: t[c] for c in COUNTS} for t in body["totals"]
    } == oracle

    # A window of 31 days reaches the day before; tomorrow's row waits for tomorrow.
    wider = (await api.get("/v1/usage/tokens?days=31", key)).body
    assert [r["day"] for r in wider["items"]][-1] == "2025-03-01"
    assert [t["input_tokens"] for t in wider["totals"]] == [9172, 1000]
    today_only = (await api.get("/v1/usage/tokens?days=1", key)).body
    assert {r["day"] for r in today_only["items"]} == {"2025-03-31"}

    # One agent's rows, and totals of that agent only.
    only = await api.get(f"/v1/usage/tokens?agent_id={support}&days=90", key)
    assert only.status == 200, only.body
    assert only.body["agent_id"] == str(support)
    assert [(r["day"], r["model"]) for r in only.body["items"]] == [
        ("2025-03-31", "claude-y"),
        ("2025-03-02", "gpt-x"),
    ]
    assert [(t["model"], t["input_tokens"]) for t in only.body["totals"]] == [
        ("claude-y", 1000),
        ("gpt-x", 7),
    ]

    # The other org sees its own rows only, and none of these.
    their_body = (await api.get("/v1/usage/tokens", await create_key(db, other, Role.VIEWER))).body
    assert {(r["model"], r["input_tokens"]) for r in their_body["items"]} == {
        ("modelo-da-outra", 555),
        ("gpt-x", 777),
    }
    assert "modelo-da-outra" not in str(body) and str(theirs) not in str(body)


@pytest.mark.parametrize(
    "query",
    [
        "days=0",
        "days=91",
        "days=-1",
        "days=abc",
        "days=",
        "days=1.5",
        "days=%C2%B2",
        "days=" + "9" * 40,
    ],
)
async def test_days_out_of_bounds_is_422(
    api: ApiClient, db: asyncpg.Connection, query: str
) -> None:
    key = await create_key(db, await create_org(db), Role.VIEWER)
    answer = await api.get(f"/v1/usage/tokens?{query}", key)
    assert (answer.status, answer.code) == (422, "invalid_days"), answer.body
    assert "1 a 90" in answer.body["message"]


async def test_the_bounds_of_days_and_a_bad_or_foreign_agent_id(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org, other = await create_org(db), await create_org(db)
    key = await create_key(db, org, Role.VIEWER)
    for days in (1, 90):
        answer = await api.get(f"/v1/usage/tokens?days={days}", key)
        assert (answer.status, answer.body["days"]) == (200, days)
    for bad in ("x", "1' or '1'='1", "0" * 33):
        answer = await api.get(f"/v1/usage/tokens?agent_id={bad}", key)
        assert (answer.status, answer.code) == (422, "invalid_agent_id"), bad
    foreign = await insert_agent(db, other, "Deles", "Outra empresa.")
    for agent in (foreign, uuid.uuid4()):
        answer = await api.get(f"/v1/usage/tokens?agent_id={agent}", key)
        assert (answer.status, answer.code) == (404, "agent_not_found")


async def test_a_model_server_naming_itself_anew_each_answer_is_read_up_to_a_limit(
    api: ApiClient, db: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = await create_org(db)
    for n in range(5):  # what a server answering with a fresh model id every time leaves
        await turn(db, org, None, f"modelo-{n}", 0, (n + 1, 1, 0, 0))
    key = await create_key(db, org, Role.VIEWER)
    monkeypatch.setattr(usage_routes, "MAX_DAY_ROWS", 3)
    monkeypatch.setattr(usage_routes, "MAX_MODEL_ROWS", 2)
    body = (await api.get("/v1/usage/tokens", key)).body
    assert (len(body["items"]), len(body["totals"]), body["truncated"]) == (3, 2, True)
    assert [t["model"] for t in body["totals"]] == ["modelo-4", "modelo-3"]  # costliest first
    monkeypatch.setattr(usage_routes, "MAX_DAY_ROWS", 5)
    monkeypatch.setattr(usage_routes, "MAX_MODEL_ROWS", 5)
    body = (await api.get("/v1/usage/tokens", key)).body
    assert (len(body["items"]), len(body["totals"]), body["truncated"]) == (5, 5, False)
