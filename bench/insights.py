"""The Painel's time over 90 days of 1,000 conversations a day, and what its counting costs
each message written.

Run: .venv/bin/python bench/insights.py [--days 90] [--per-day 1000] [--rounds 5]
On the Postgres at DATABASE_URL (a database of its own, dropped at the end): one org's
conversations and messages are written set-wise (generate_series) through the real triggers
that keep the Painel's rollups (skillet_insight_message, skillet_insight_conversation): each
conversation a customer burst of 1-4 messages answered by the agent after 2-40 s, 15% handed
to a person (by the customer, the agent, the console or the owner's phone; 85% of those
answered 1-60 min later), messages spread over the day with evening peaks; plus token and
skill rollups as the reply commit writes them, and a second org of the same size (its rows
never counted). Then the console's /console/painel (signed in, 90-day period) and
GET /v1/insights are timed (median of --rounds after a warm-up), against /healthz, the same
app with no database. Floor: the page in <= 500 ms.

The write side: the same 1,000 conversations' messages inserted with and without the triggers
(session_replication_role), so the ratio says what the counting adds to a message insert.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Any

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import aiohttp
import asyncpg

from api.app import build_app
from api.console.sessions import CSRF_FIELD, SESSION_COOKIE, SIGN_IN_COOKIE
from api.key_queries import insert_api_key
from api.keys import Role, mint_key
from api.model_prices import parse_model_prices
from api.routing import ApiDeps
from core.db import connect, create_pool, with_database
from core.organizations import insert_organization
from dev.env import load_settings
from skills.usage import UsageStore
from webhook.server import start_site
from worker.logging import configure_logging
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations
from worker.settings import Settings

FLOOR_MS = 500.0
PRICES = (
    '{"anthropic/claude-sonnet-4-5": {"input": 16.5, "cached_input": 1.65, "output": 82.5},'
    ' "openai/gpt-4.1-mini": {"input": 2.2, "cached_input": 0.55, "output": 8.8}}'
)

# $1 org, $2 first day (UTC midnight of it), $3 days, $4 conversations a day. One conversation
# per (day, n); its customer's burst of 1-4 messages at an hour weighted toward the evening.
SEED_CONVERSATIONS = """
insert into conversations (id, organization_id, channel, contact_id, created_at)
select gen_random_uuid(), $1, 'whatsapp', '55' || (11900000000 + d * 100000 + n)::text,
       $2::timestamptz + make_interval(days => d)
         + make_interval(secs => (6 * 3600 + (n * 7919 % 17) * 3600 + (n * 104729 % 3600)))
from generate_series(0, $3 - 1) d, generate_series(1, $4) n
"""

SEED_MESSAGES = """
with c as (
    select id, created_at, row_number() over (order by created_at, id) as k
    from conversations where organization_id = $1 and created_at >= $2
), inbound as (
    insert into messages (organization_id, conversation_id, direction, channel, external_id,
                          body, received_at, created_at)
    select $1, c.id, 'inbound', 'whatsapp', 'wamid.' || c.id || '.' || m,
           'mensagem do cliente', c.created_at + make_interval(secs => m * 20),
           c.created_at + make_interval(secs => m * 20)
    from c, generate_series(1, 1 + (c.k % 4)::int) m
    returning id, conversation_id, received_at
), last as (
    select distinct on (conversation_id) id, conversation_id, received_at
    from inbound order by conversation_id, received_at desc
)
insert into messages (organization_id, conversation_id, direction, channel, body, reply_to_id,
                      author, created_at)
select $1, l.conversation_id, 'outbound', 'whatsapp', 'resposta do agente', l.id, 'agent',
       l.received_at + make_interval(secs => 2 + (hashtext(l.id::text) & 1023) % 39)
from last l
"""

# 15% of conversations handed off (the trigger counts the mode change on its mode_since day),
# then 85% of those answered by a person 1-60 min later.
SEED_HANDOFFS = """
with picked as (
    select id, created_at, (hashtext(id::text) & 65535) as h
    from conversations where organization_id = $1 and created_at >= $2
)
update conversations c set mode = 'waiting',
    mode_cause = (array['customer', 'tool', 'console', 'phone'])[1 + p.h % 4],
    mode_since = p.created_at + interval '3 minutes',
    handoff_at = p.created_at + interval '3 minutes'
from picked p where c.id = p.id and p.h % 100 < 15
"""

SEED_PERSON_REPLIES = """
update conversations set mode = 'human', held_by = 'cli',
    person_replied_at = handoff_at + make_interval(secs => 60 + (hashtext(id::text) & 65535) % 3540)
where organization_id = $1 and mode = 'waiting' and (hashtext(id::text) & 65535) % 100 < 85
"""

# Token and skill rollups as the reply commit writes them: 32 slots per model a UTC day.
SEED_TOKENS = """
insert into token_usage_daily (organization_id, agent_id, provider, model, day, slot, turns,
    calls, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens)
select $1, null, p.provider, p.model, ($2::timestamptz)::date + d, s, 40, 48,
       40 * 9000, 40 * 300, 40 * 7000, 40 * 100
from generate_series(0, $3 - 1) d, generate_series(0, 31) s,
     (values ('anthropic', 'claude-sonnet-4-5'), ('openai', 'gpt-4.1-mini')) p(provider, model)
"""

SEED_SKILLS = """
insert into skill_activation_daily (organization_id, skill_name, day, hard_count, probe_count,
                                    capped_count, intent_count)
select $1, 'skill-' || k, ($2::timestamptz)::date + d, (k * 37 + d) % 90, (k * 11 + d) % 13,
       0, k % 5
from generate_series(0, $3 - 1) d, generate_series(1, 40) k
"""


async def _seed_org(conn: asyncpg.Connection, org: uuid.UUID, first: datetime, args: Any) -> None:
    await conn.execute(SEED_CONVERSATIONS, org, first, args.days, args.per_day)
    await conn.execute(SEED_MESSAGES, org, first)
    await conn.execute(SEED_HANDOFFS, org, first)
    await conn.execute(SEED_PERSON_REPLIES, org)
    await conn.execute(SEED_TOKENS, org, first, args.days)
    await conn.execute(SEED_SKILLS, org, first, args.days)


async def _write_cost(conn: asyncpg.Connection, per_day: int) -> tuple[float, float]:
    """Seconds to write one day of an org's conversations and messages, with the Painel's
    triggers and without (each in a transaction rolled back)."""
    org = uuid.uuid4()
    await insert_organization(conn, org, "Escrita")
    timings = []
    for replica in (False, True):
        tx = conn.transaction()
        await tx.start()
        try:
            if replica:  # triggers off for this transaction (the owner may)
                await conn.execute("set local session_replication_role = replica")
            started = time.perf_counter()
            await conn.execute(
                SEED_CONVERSATIONS, org, datetime(2026, 1, 1, tzinfo=UTC), 1, per_day
            )
            await conn.execute(SEED_MESSAGES, org, datetime(2026, 1, 1, tzinfo=UTC))
            timings.append(time.perf_counter() - started)
        finally:
            await tx.rollback()
    return timings[0], timings[1]


async def _session(http: aiohttp.ClientSession, base_url: str, key: str) -> str:
    async with http.get(f"{base_url}/console/entrar") as page:
        token = page.cookies[SIGN_IN_COOKIE].value
    async with http.post(
        f"{base_url}/console/entrar",
        data={CSRF_FIELD: token, "key": key},
        headers={"Cookie": f"{SIGN_IN_COOKIE}={token}"},
        allow_redirects=False,
    ) as answer:
        assert answer.status == 303, answer.status
        return answer.cookies[SESSION_COOKIE].value


async def _time_ms(http: aiohttp.ClientSession, url: str, headers: dict[str, str], n: int) -> float:
    samples = []
    for _ in range(n + 1):  # the first warms up
        started = time.perf_counter()
        async with http.get(url, headers=headers) as response:
            body = await response.read()
            assert response.status == 200, (response.status, body[:300])
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples[1:])


async def _measure(
    database_url: str, key: str, first: date, last: date, rounds: int
) -> dict[str, float]:
    pool = await create_pool(database_url, min_size=1, max_size=4, app_role="skillet_api")

    def clock() -> datetime:
        return datetime.combine(last, datetime.min.time(), UTC) + timedelta(hours=20)

    deps = ApiDeps(  # type: ignore[arg-type]
        pool=pool,
        store=None,
        queue=None,
        clock=clock,
        usage=UsageStore(clock),
        model_prices=parse_model_prices(PRICES),
    )
    runner, port = await start_site(build_app(deps), "127.0.0.1", 0)
    base = f"http://127.0.0.1:{port}"
    period = f"from={first}&to={last}"
    try:
        async with aiohttp.ClientSession() as http:
            session = await _session(http, base, key)
            cookie = {"Cookie": f"{SESSION_COOKIE}={session}"}
            return {
                "page": await _time_ms(http, f"{base}/console/painel?{period}", cookie, rounds),
                "json": await _time_ms(
                    http, f"{base}/v1/insights?{period}", {"Authorization": f"Bearer {key}"}, rounds
                ),
                "healthz": await _time_ms(http, f"{base}/healthz", {}, rounds),
            }
    finally:
        await runner.cleanup()
        await pool.close()


async def _main(args: argparse.Namespace, base: Settings) -> float:
    name = f"skillet_insights_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    await admin.close()
    database_url = with_database(base.database_url, name)
    first = date(2026, 9, 1)
    last = first + timedelta(days=args.days - 1)
    try:
        conn = await connect(database_url)
        await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
        org, other = uuid.uuid4(), uuid.uuid4()
        await insert_organization(conn, org, "Bench")
        await insert_organization(conn, other, "Outra")
        minted = mint_key()
        await insert_api_key(conn, org, minted, Role.ADMIN, "bench")
        start = datetime.combine(first, datetime.min.time(), UTC)
        started = time.perf_counter()
        for each in (org, other):
            await _seed_org(conn, each, start, args)
        seeded_s = time.perf_counter() - started
        await conn.execute("analyze")
        counts = await conn.fetchrow(
            "select (select count(*) from messages) as messages, "
            "(select count(*) from conversations) as conversations"
        )
        with_s, without_s = await _write_cost(conn, args.per_day)
        await conn.close()
        times = await _measure(database_url, minted.key, first, last, args.rounds)
    finally:
        admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    print(
        f"seeded 2 orgs x {args.days} days x {args.per_day} conversations: "
        f"{counts['conversations']} conversations, {counts['messages']} messages "
        f"in {seeded_s:.1f} s"
    )
    print(
        f"one day of messages written: {with_s * 1000:.0f} ms with the Painel's triggers, "
        f"{without_s * 1000:.0f} ms without (ratio {with_s / without_s:.2f})"
    )
    print(f"GET /v1/insights ({args.days} days)  {times['json']:7.1f} ms")
    print(f"GET /healthz                 {times['healthz']:7.1f} ms")
    verdict = "within" if times["page"] <= FLOOR_MS else "OVER"
    print(
        f"console Painel ({args.days} days): {times['page']:.1f} ms "
        f"({times['page'] / times['healthz']:.0f}x /healthz; floor {FLOOR_MS:.0f} ms: {verdict})"
    )
    return times["page"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--per-day", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    configure_logging(level="WARNING")
    asyncio.run(_main(args, load_settings()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
