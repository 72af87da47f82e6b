"""SQL of what an org's model calls cost: its rows of the `token_usage_daily` rollup.

The rollup holds one row per org, agent, provider, model and UTC day (skillet_bump_token_usage,
called by each reply's commit); nothing here reads messages or turns. A window is "the `days` UTC
days ending `today`", today included, as in api.skill_queries. The provider and model are what
the model server said it was: a server that names itself differently on every answer makes a
row each time, so both reads stop at a row limit and say they did (`truncated`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date
from typing import Any

import asyncpg

MAX_DAY_ROWS = 5_000  # 90 days x 55 agent-model pairs; past it the answer says `truncated`
MAX_MODEL_ROWS = 200  # provider-model pairs in the totals


@dataclass(frozen=True)
class TokenCounts:
    """Sums of rollup rows. `unreported_turns`: turns whose provider sent no token count;
    their tokens are in no sum (a partial sum would read as a cheaper turn)."""

    turns: int
    calls: int
    input_tokens: int  # every prompt token, cached or not
    output_tokens: int
    cache_read_tokens: int  # part of input_tokens read from the provider's prompt cache
    cache_write_tokens: int  # part of input_tokens written to it
    unreported_turns: int

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass(frozen=True)
class UsageDay:
    day: date
    agent_id: uuid.UUID | None  # None: turns answered without an agent row (the default)
    agent_name: str | None  # None: no agent, or one no longer in the org
    provider: str
    model: str
    counts: TokenCounts

    def to_json(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "agent_id": None if self.agent_id is None else str(self.agent_id),
            "agent_name": self.agent_name,
            "provider": self.provider,
            "model": self.model,
            **self.counts.to_json(),
        }


@dataclass(frozen=True)
class ModelTotal:
    provider: str
    model: str
    counts: TokenCounts

    def to_json(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, **self.counts.to_json()}


_COUNTS = (
    "turns",
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "unreported_turns",
)
_SUMS = ", ".join(f"sum(t.{c})::bigint as {c}" for c in _COUNTS)
# $1 org, $2 today (UTC), $3 days, $4 agent id or null.
_WINDOW = """
where t.organization_id = $1 and t.day > $2::date - $3::int and t.day <= $2::date
  and ($4::uuid is null or t.agent_id = $4)
"""


def _counts(row: Any) -> TokenCounts:
    return TokenCounts(*(int(row[c]) for c in _COUNTS))


# Newest day first; one row per (day, agent, provider, model): the sum of its slots
# (skillet_bump_token_usage writes one of 32 per key).
LIST_USAGE_DAYS = f"""
select t.day, t.agent_id, a.name as agent_name, t.provider, t.model, {_SUMS}
from token_usage_daily t
left join agents a on a.id = t.agent_id and a.organization_id = t.organization_id
{_WINDOW}
group by t.day, t.agent_id, a.name, t.provider, t.model
order by t.day desc, a.name nulls first, t.agent_id nulls first, t.provider, t.model
limit $5
"""


async def list_usage_days(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    today: date,
    days: int,
    agent_id: uuid.UUID | None,
    limit: int,
) -> list[UsageDay]:
    rows = await conn.fetch(LIST_USAGE_DAYS, organization_id, today, days, agent_id, limit)
    return [
        UsageDay(r["day"], r["agent_id"], r["agent_name"], r["provider"], r["model"], _counts(r))
        for r in rows
    ]


# The costliest first (what a budget looks at), then by name so ties read the same each time.
LIST_MODEL_TOTALS = f"""
select t.provider, t.model, {_SUMS}
from token_usage_daily t
{_WINDOW}
group by t.provider, t.model
order by sum(t.input_tokens) + sum(t.output_tokens) desc, t.provider, t.model
limit $5
"""


async def list_model_totals(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    today: date,
    days: int,
    agent_id: uuid.UUID | None,
    limit: int,
) -> list[ModelTotal]:
    rows = await conn.fetch(LIST_MODEL_TOTALS, organization_id, today, days, agent_id, limit)
    return [ModelTotal(r["provider"], r["model"], _counts(r)) for r in rows]


FETCH_AGENT_EXISTS = "select exists (select 1 from agents where organization_id = $1 and id = $2)"


async def fetch_agent_exists(
    conn: asyncpg.Connection, organization_id: uuid.UUID, agent_id: uuid.UUID
) -> bool:
    return bool(await conn.fetchval(FETCH_AGENT_EXISTS, organization_id, agent_id))
