"""`GET /v1/insights`: the Painel's series, counted by the rollup triggers as messages are
stored and conversations change hands, in the org's days; never another org's; refused
periods with their codes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import pytest
import pytest_asyncio

from api.insight_series import bucket_of
from api.keys import Role
from api.model_prices import parse_model_prices
from tests.integration.api_support import ApiClient, create_key, record_turn_usage, running_api
from tests.integration.support import create_org
from worker.resources import Resources
from worker.settings import Settings

PRICES = '{"openai/gpt-x": {"input": 10, "cached_input": 1, "output": 40}}'


@pytest_asyncio.fixture(loop_scope="session")
async def api(settings: Settings, resources: Resources) -> AsyncIterator[ApiClient]:
    async with running_api(settings, resources.store) as client:
        yield client


async def conversation(db: asyncpg.Connection, org: uuid.UUID, contact: str) -> uuid.UUID:
    return uuid.UUID(
        str(
            await db.fetchval(
                "insert into conversations (organization_id, channel, contact_id) "
                "values ($1, 'whatsapp', $2) returning id",
                org,
                contact,
            )
        )
    )


async def customer(db: asyncpg.Connection, org: uuid.UUID, conv: uuid.UUID, at: datetime) -> Any:
    return await db.fetchval(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body, received_at, created_at) "
        "values ($1, $2, 'inbound', 'whatsapp', $3, 'oi', $4, $4) returning id",
        org,
        conv,
        f"wamid.{uuid.uuid4().hex}",
        at,
    )


async def reply(
    db: asyncpg.Connection, org: uuid.UUID, conv: uuid.UUID, to: Any, author: str, at: datetime
) -> None:
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, body, "
        "reply_to_id, author, created_at) "
        "values ($1, $2, 'outbound', 'whatsapp', 'ok', $3, $4, $5)",
        org,
        conv,
        to if author == "agent" else None,
        author,
        at,
    )


async def db_today(db: asyncpg.Connection) -> date:
    """The org's day now, as the conversations trigger stamps a handoff (the server's clock)."""
    value = await db.fetchval("select (now() at time zone 'America/Sao_Paulo')::date")
    assert isinstance(value, date)
    return value


async def test_series_follow_messages_and_handoffs_in_the_orgs_days(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org, other = await create_org(db, "Padaria"), await create_org(db, "Concorrente")
    today = await db_today(db)
    # 02:30 UTC of today's UTC date may still be yesterday in São Paulo: use local noon.
    noon = datetime(today.year, today.month, today.day, 15, 0, tzinfo=UTC)  # 12:00 in SP
    yesterday = noon - timedelta(days=1)
    late = datetime(today.year, today.month, today.day, 1, 30, tzinfo=UTC)  # 22:30 the day before

    alone = await conversation(db, org, "5511900000001")
    asked = await customer(db, org, alone, noon)
    await reply(db, org, alone, asked, "agent", noon + timedelta(seconds=4))
    second = await customer(db, org, alone, noon + timedelta(minutes=1))
    await reply(db, org, alone, second, "agent", noon + timedelta(minutes=1, seconds=30))

    helped = await conversation(db, org, "5511900000002")
    await customer(db, org, helped, noon)
    await db.execute("select skillet_change_mode($1, 'handoff', null, 'customer', 'x')", helped)
    await db.execute(
        "update conversations set handoff_at = now() - interval '120 seconds' where id = $1",
        helped,
    )
    await db.execute("select skillet_change_mode($1, 'take', 'cli', 'console', null, true)", helped)
    await reply(db, org, helped, None, "person", noon + timedelta(minutes=2))

    earlier = await conversation(db, org, "5511900000003")
    await customer(db, org, earlier, yesterday)
    await customer(db, org, earlier, late)  # 22:30 local: still yesterday in the org's days

    theirs = await conversation(db, other, "5511900000009")
    for _ in range(5):
        await customer(db, other, theirs, noon)
    await db.execute("select skillet_change_mode($1, 'handoff', null, 'tool', 'x')", theirs)
    await record_turn_usage(db, org, None, "openai", "gpt-x", noon, (1_000_000, 500_000, 0, 0))
    await record_turn_usage(db, other, None, "openai", "gpt-x", noon, (9_999, 0, 9, 0))
    await db.execute(
        "insert into skill_activation_daily (organization_id, skill_name, day, hard_count, "
        "probe_count) values ($1, 'entrega', $3, 5, 0), ($1, 'troca', $3, 1, 4), "
        "($2, 'deles', $3, 50, 50)",
        org,
        other,
        today,
    )

    key = await create_key(db, org, Role.VIEWER)
    first = today - timedelta(days=1)
    answer = await api.get(f"/v1/insights?from={first}&to={today}", key)
    assert answer.status == 200, answer.body
    body = answer.body
    assert body["days"] == [first.isoformat(), today.isoformat()]
    series = body["series"]
    assert series["conversations"] == [1, 2]
    assert series["conversations_agent_only"] == [1, 1]
    assert series["conversations_with_person"] == [0, 1]
    assert series["customer_messages"] == [2, 3]
    assert series["handoffs"] == [0, 1] and series["handoffs_customer"] == [0, 1]
    assert series["handoffs_tool"] == [0, 0]  # the other org's handoff
    # 120 s lands in the bucket (115, 144]: the median interpolates inside it.
    p50 = series["person_first_reply_p50_s"]
    assert p50[0] is None and 115 <= p50[1] <= 144
    agent = series["agent_reply_p90_s"]
    assert agent[0] is None and 23 <= agent[1] <= 36  # 4 s and 30 s: the 90th is the 30 s one
    assert series["after_hours_share"] == [0.0, 0.0]  # no business hours: always open
    assert body["top_skills"] == [{"name": "entrega", "uses": 5}, {"name": "troca", "uses": 1}]
    assert body["top_unanswered"] == [{"name": "troca", "searches": 4}]
    assert series["tokens_output"][1] == 500_000 and series["cost_brl"] == [None, None]
    assert "tokens_input" in body["utc_series"]


async def test_after_hours_and_cost_when_hours_and_prices_are_set(
    settings: Settings, resources: Resources, db: asyncpg.Connection
) -> None:
    org = await create_org(db, "Loja")
    await db.execute(
        "insert into org_business_hours (organization_id, schedule, timezone) "
        "values ($1, 'seg-dom 09:00-18:00', 'America/Sao_Paulo')",
        org,
    )
    day = date(2026, 11, 10)
    conv = await conversation(db, org, "5511900000001")
    for hour_utc in (13, 14, 15, 23):  # 10:00, 11:00, 12:00 and 20:00 in São Paulo
        await customer(db, org, conv, datetime(2026, 11, 10, hour_utc, 0, tzinfo=UTC))
    at = datetime(2026, 11, 10, 15, 0, tzinfo=UTC)
    await record_turn_usage(db, org, None, "openai", "gpt-x", at, (2_000_000, 100, 1_000_000, 0))
    await record_turn_usage(db, org, None, "local", "m", at, (10, 1, 0, 0))
    key = await create_key(db, org, Role.VIEWER)
    async with running_api(settings, resources.store) as api:
        api.deps.model_prices.update(parse_model_prices(PRICES))
        answer = await api.get(f"/v1/insights?from={day}&to={day}", key)
    assert answer.status == 200, answer.body
    series = answer.body["series"]
    assert series["customer_messages_after_hours"] == [1]
    assert series["after_hours_share"] == [25.0]
    # 1M fresh input x R$10 + 1M cached x R$1 + 100 output x R$40, per million.
    assert series["cost_brl"] == [11.0]
    assert answer.body["unpriced_models"] == ["local/m"]


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("from=2026-13-01&to=2026-12-01", "invalid_date"),
        ("from=01/12/2026", "invalid_date"),
        ("from=２０２６-01-01", "invalid_date"),
        ("from=2026-12-02&to=2026-12-01", "from_after_to"),
        ("from=2026-01-01&to=2026-04-01", "range_too_long"),
    ],
)
async def test_refused_periods(
    api: ApiClient, db: asyncpg.Connection, query: str, code: str
) -> None:
    org = await create_org(db, "Loja")
    key = await create_key(db, org, Role.VIEWER)
    answer = await api.get(f"/v1/insights?{query}", key)
    assert (answer.status, answer.body["error"]) == (422, code)


async def test_ninety_days_is_the_longest_period_and_a_key_is_needed(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db, "Loja")
    key = await create_key(db, org, Role.VIEWER)
    answer = await api.get("/v1/insights?from=2026-01-01&to=2026-04-01", key)
    assert answer.status == 422  # 91 days
    answer = await api.get("/v1/insights?from=2026-01-01&to=2026-03-31", key)
    assert answer.status == 200 and len(answer.body["days"]) == 90
    assert (await api.get("/v1/insights")).status == 401


async def test_the_sql_bucket_is_its_python_twin(db: asyncpg.Connection) -> None:
    seconds = [0, 0.5, 1, 1.0001, 1.25, 1.26, 4, 5, 59.9, 60, 61, 600, 3600, 86400, 1e6, 1e9]
    found = await db.fetch(
        "select s, skillet_insight_bucket(s) as b from unnest($1::float8[]) s", seconds
    )
    assert [r["b"] for r in found] == [bucket_of(s) for s in seconds]


async def test_an_org_sees_none_of_another_orgs_counts(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    mine, theirs = await create_org(db, "Minha"), await create_org(db, "Deles")
    today = await db_today(db)
    noon = datetime(today.year, today.month, today.day, 15, 0, tzinfo=UTC)
    conv = await conversation(db, theirs, "5511900000001")
    asked = await customer(db, theirs, conv, noon)
    await reply(db, theirs, conv, asked, "agent", noon + timedelta(seconds=3))
    await db.execute("select skillet_change_mode($1, 'handoff', null, 'tool', 'x')", conv)
    await db.execute("select skillet_change_mode($1, 'take', 'cli', 'console', null, true)", conv)
    await record_turn_usage(db, theirs, None, "openai", "gpt-x", noon, (10, 10, 0, 0))
    await db.execute(
        "insert into skill_activation_daily (organization_id, skill_name, day, hard_count, "
        "probe_count) values ($1, 'deles', $2, 5, 5)",
        theirs,
        today,
    )
    body = (await api.get(f"/v1/insights?to={today}", await create_key(db, mine, Role.VIEWER))).body
    assert all(v in (0, None, 0.0) for values in body["series"].values() for v in values), body
    assert (body["top_skills"], body["top_unanswered"]) == ([], [])
    seen = (
        await api.get(f"/v1/insights?to={today}", await create_key(db, theirs, Role.VIEWER))
    ).body
    assert seen["series"]["conversations_with_person"][-1] == 1
    assert seen["series"]["handoffs_tool"][-1] == 1


async def test_a_zone_the_database_does_not_know_never_fails_a_message(
    db: asyncpg.Connection,
) -> None:
    org = await create_org(db, "Loja")
    await db.execute(
        "insert into org_business_hours (organization_id, timezone) values ($1, 'Marte/Olimpo')",
        org,
    )
    conv = await conversation(db, org, "5511900000001")
    await customer(db, org, conv, datetime(2026, 11, 10, 2, 30, tzinfo=UTC))
    day = await db.fetchval("select day from conversation_daily where organization_id = $1", org)
    assert day == date(2026, 11, 9)  # read in America/Sao_Paulo: 23:30 the day before


async def test_a_conversations_old_day_marks_go_and_its_counts_stay(
    api: ApiClient, db: asyncpg.Connection
) -> None:
    org = await create_org(db, "Loja")
    conv = await conversation(db, org, "5511900000001")
    day = date(2026, 11, 20)
    for back in (5, 4, 0):
        await customer(db, org, conv, datetime(2026, 11, 20 - back, 15, 0, tzinfo=UTC))
    marks = await db.fetch("select day from conversation_days where conversation_id = $1", conv)
    assert [r["day"] for r in marks] == [day]  # the older marks went
    key = await create_key(db, org, Role.VIEWER)
    body = (await api.get(f"/v1/insights?from={day - timedelta(days=5)}&to={day}", key)).body
    assert body["series"]["conversations"] == [1, 1, 0, 0, 0, 1]
