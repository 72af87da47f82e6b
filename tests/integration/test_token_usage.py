"""What a business budgets from: each turn's tokens per org, agent and model per UTC day,
written by the reply's commit (not only logged)."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, date, datetime

import asyncpg
import pytest

from cli.main import main
from tests.integration.support import create_org, enqueue, payload, run_burst
from turn.agent_queries import insert_agent
from turn.model import ModelRequest, ModelResponse
from worker.settings import Settings


class Metered:
    """Answers at once and reports what it cost (None: the server sent no count)."""

    def __init__(self, input_tokens: int | None, output_tokens: int | None) -> None:
        self._input, self._output = input_tokens, output_tokens

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            text="ok",
            input_tokens=self._input,
            output_tokens=self._output,
            cache_read_tokens=80 if self._input else None,
            provider="openai",
            model="gpt-x",
        )


# A day's row is the sum of its slots; summed over days too, with the days
# they fell on: two turns on either side of midnight are two days' rows.
USAGE = """
select agent_id, provider, model, sum(turns) as turns, sum(calls) as calls,
       sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens,
       sum(cache_read_tokens) as cache_read_tokens, sum(unreported_turns) as unreported_turns,
       min(day) as first_day, max(day) as last_day
from token_usage_daily where organization_id = $1
group by agent_id, provider, model
"""


def utc_today() -> date:
    """The UTC day by the worker's clock (the reply commit's `at`, which picks the row)."""
    return datetime.now(UTC).date()


async def test_each_reply_adds_its_turns_tokens_to_the_day(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    agent = await insert_agent(db, org, "Vendas", "Você vende.")
    await enqueue(settings, payload(org, "a", "oi"), payload(org, "b", "olá"))
    before = utc_today()
    await run_burst(settings, model=Metered(100, 7))
    after = utc_today()
    [row] = await db.fetch(USAGE, org)
    # The day the turns ran on (the wall clock's: the test may run across midnight).
    assert before <= row["first_day"] <= row["last_day"] <= after
    assert {k: v for k, v in row.items() if not k.endswith("_day")} == {
        "agent_id": agent,
        "provider": "openai",
        "model": "gpt-x",
        "turns": 2,
        "calls": 2,
        "input_tokens": 200,
        "output_tokens": 14,
        "cache_read_tokens": 160,
        "unreported_turns": 0,
    }


async def test_a_turn_without_counts_is_counted_as_unreported_not_as_free(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    await enqueue(settings, payload(org, "a", "oi"))
    await run_burst(settings, model=Metered(None, None))
    [row] = await db.fetch(USAGE, org)
    assert (row["turns"], row["input_tokens"], row["unreported_turns"]) == (1, 0, 1)


async def test_status_shows_todays_tokens(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    # "Today" is the database's day when status runs: a test that ran across midnight
    # (its turn yesterday) runs once more, within one day, from no usage at all.
    for _ in range(2):
        await db.execute("truncate token_usage_daily")
        day = utc_today()
        org = await create_org(db)
        await enqueue(env, payload(org, f"t-{uuid.uuid4()}", "oi"))
        await run_burst(env, model=Metered(100, 7))
        capsys.readouterr()
        assert await asyncio.to_thread(main, ["status", "--json"]) == 0
        status = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        if utc_today() == day:
            break
    assert status["tokens_today"] == [
        {
            "provider": "openai",
            "model": "gpt-x",
            "turns": 1,
            "input_tokens": 100,
            "output_tokens": 7,
            "cache_read_tokens": 80,
            "unreported_turns": 0,
        }
    ]
    assert await asyncio.to_thread(main, ["status"]) == 0
    assert "openai/gpt-x: 1 turns, 100 in (80% cached), 7 out" in capsys.readouterr().out


async def test_concurrent_commits_of_one_org_bump_rows_of_their_own_and_readers_sum_them(
    settings: Settings, db: asyncpg.Connection
) -> None:
    """One busy org's commits must not queue on a single rollup row (token_usage_daily's slots)."""
    org = await create_org(db)
    conns: dict[int, asyncpg.Connection] = {}
    try:
        while len(conns) < 2:  # two sessions whose backend pids fall in different slots
            conn = await asyncpg.connect(settings.database_url)
            slot = await conn.fetchval("select pg_backend_pid() % 32")
            if slot in conns:
                await conn.close()
            else:
                conns[slot] = conn
        usage = '{"provider": "openai", "model": "gpt-x", "calls": 1, "input_tokens": 10,'
        usage += ' "output_tokens": 2}'
        async with conns[min(conns)].transaction():  # holds its row lock...
            bump = "select skillet_bump_token_usage($1, $2::text::jsonb, now())"
            await conns[min(conns)].execute(bump, org, usage)
            # ...which the other session's commit does not wait for (a timeout would raise).
            # Waiting on that lock never ends by itself: any timeout tells; a long one
            # leaves a loaded machine time for the insert itself.
            await conns[max(conns)].execute("set statement_timeout = '15s'")
            await conns[max(conns)].execute(bump, org, usage)
    finally:
        for conn in conns.values():
            await conn.close()
    slots = await db.fetch("select slot from token_usage_daily where organization_id = $1", org)
    assert sorted(r["slot"] for r in slots) == sorted(conns)
    [row] = await db.fetch(USAGE, org)
    assert (row["turns"], row["calls"], row["input_tokens"], row["output_tokens"]) == (2, 2, 20, 4)
