"""What the inbox's polls cost: the console's notifications poll (api.notice_queries, every
3 s on every open page) beside the Atendimento queue's own poll (the waiting and held lists
it already reads every 3 s), and a thread's messages with their delivery read from the
receipts (api.history_queries) beside the former read of the outbox row alone.

Run: .venv/bin/python bench/inbox_polls.py [--calls N] [--rounds R]
Seeds one org (beside 2 others of the same size) with 2,000 conversations of 20 messages each
(half replies, each with an outbox row and a receipt), 200 waiting, 100 held by the person
polling, 5,000 audit rows of which 50 pass conversations to that person, and one thread of
200 messages. Reads as skillet_api with the org bound (as the API does), one connection,
interleaved rounds, medians. On the Postgres at DATABASE_URL (a database of its own, dropped
at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

from api.history_queries import LIST_MESSAGES, receipt_of
from api.notice_queries import list_notices
from conversation.person_queries import list_conversation_views
from core.db import connect, create_pool, with_database
from core.db_roles import API_ROLE
from core.organizations import insert_organization
from core.tenancy import org_connection
from dev.env import load_settings
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

ORGS = 3
CONVERSATIONS = 2_000
MESSAGES_EACH = 20
THREAD_MESSAGES = 200
ACTOR = "person:00000000-0000-4000-8000-00000000beef"

# The former read: the same query with the outbox rows' status and error only (the receipts'
# joins taken out), so the two differ by the receipts alone.
OLD_LIST_MESSAGES = (
    LIST_MESSAGES.replace(receipt_of("f", "fr"), " ")
    .replace(receipt_of("o", "rc"), "\n")
    .replace("coalesce(rc.status, o.status)", "o.status")
    .replace("coalesce(o.last_error, rc.error)", "o.last_error")
    .replace("coalesce(fr.status, f.status)", "f.status")
)
assert "outbox_receipts" not in OLD_LIST_MESSAGES

SEED = """
with c as (
    insert into conversations (organization_id, channel, contact_id, created_at)
    select $1, 'whatsapp', '5511' || lpad(i::text, 8, '0'), now() - (i || ' min')::interval
    from generate_series($4::int, $4::int + $2 - 1) i
    returning id
), m as (
    insert into messages (organization_id, conversation_id, direction, channel, external_id,
                          body, created_at)
    select $1, c.id, case when j % 2 = 0 then 'outbound' else 'inbound' end, 'whatsapp',
           case when j % 2 = 1 then 'wamid.' || c.id || '.' || j end,
           'mensagem ' || j, now() - ((100 - j) || ' s')::interval
    from c, generate_series(1, $3) j
    returning id, conversation_id, direction
), o as (
    insert into outbox (organization_id, conversation_id, message_id, body, status)
    select $1, m.conversation_id, m.id, 'resposta', 'sent' from m where m.direction = 'outbound'
    returning id
)
insert into outbox_receipts (organization_id, provider_message_id, outbox_id, status)
select $1, 'wamid.out.' || o.id, o.id,
       (array['accepted', 'sent', 'delivered', 'read'])[1 + (abs(hashtext(o.id::text)) % 4)]
from o
"""
MODES = """
update conversations c set mode = 'waiting', mode_since = now() - (n || ' s')::interval,
    mode_cause = 'customer'
from (select id, row_number() over (order by id) n from conversations
      where organization_id = $1) x
where c.id = x.id and x.n <= 200;
update conversations c set mode = 'human', held_by = $2, mode_since = now(),
    mode_cause = 'console'
from (select id, row_number() over (order by id) n from conversations
      where organization_id = $1) x
where c.id = x.id and x.n > 200 and x.n <= 300;
insert into audit_log (organization_id, actor, action, detail)
select $1, 'cli', case when i % 100 = 0 then 'conversation.transfer' else 'skill.pin' end,
       jsonb_build_object('conversation_id', (select id from conversations
                          where organization_id = $1 and held_by = $2 limit 1), 'to', $2)
from generate_series(1, 5000) i;
"""


async def _seed(conn: asyncpg.Connection) -> tuple[uuid.UUID, uuid.UUID]:
    """The orgs; (the polled org, its long thread)."""
    orgs = []
    for n in range(ORGS):
        org = uuid.uuid4()
        await insert_organization(conn, org, f"Org {n}")
        await conn.execute(SEED, org, CONVERSATIONS, MESSAGES_EACH, 1)
        orgs.append(org)
    org = orgs[0]
    await conn.execute(SEED, org, 1, THREAD_MESSAGES, CONVERSATIONS + 1)  # the long thread
    await conn.execute(MODES.replace("$1", f"'{org}'::uuid").replace("$2", f"'{ACTOR}'"))
    thread = await conn.fetchval(
        "select conversation_id from messages where organization_id = $1"
        " group by conversation_id order by count(*) desc limit 1",
        org,
    )
    await conn.execute("analyze")
    return org, thread


async def _queue(conn: asyncpg.Connection, org: uuid.UUID) -> None:
    """What the Atendimento page's poll reads: the waiting and the held lists."""
    await list_conversation_views(conn, org, mode="waiting", after=None, limit=201)
    await list_conversation_views(conn, org, mode="human", after=None, limit=201)


async def _per_call_ms(call: Callable[[], Awaitable[object]], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        await call()
    return (time.perf_counter() - started) / calls * 1000


async def _main(args: argparse.Namespace) -> None:
    base = load_settings()
    name = f"skillet_inbox_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    database_url = with_database(base.database_url, name)
    results: dict[str, list[float]] = {}
    kinds: dict[str, int] = {}
    try:
        conn = await connect(database_url)
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            org, thread = await _seed(conn)
        finally:
            await conn.close()
        pool = await create_pool(database_url, min_size=1, max_size=1, app_role=API_ROLE)
        try:
            async with org_connection(pool, org) as bound:
                reads: dict[str, Callable[[], Awaitable[object]]] = {
                    "notices": lambda: list_notices(bound, org, ACTOR),
                    "queue": lambda: _queue(bound, org),
                    "thread_old": lambda: bound.fetch(
                        OLD_LIST_MESSAGES, org, thread, None, None, 201
                    ),
                    "thread_receipts": lambda: bound.fetch(
                        LIST_MESSAGES, org, thread, None, None, 201
                    ),
                }
                told = await list_notices(bound, org, ACTOR)
                kinds = {
                    k: sum(n.kind == k for n in told) for k in ("waiting", "message", "transfer")
                }
                results = {label: [] for label in reads}
                for read in reads.values():  # warm up (plans, caches)
                    await _per_call_ms(read, 5)
                for _ in range(args.rounds):
                    for label, read in reads.items():
                        results[label].append(await _per_call_ms(read, args.calls))
        finally:
            await pool.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    medians = {label: statistics.median(values) for label, values in results.items()}
    print(f"notices read: {kinds} (at most 50 of each kind)")
    print(f"{'read':<16} {'ms per call':>12}")
    for label, ms in medians.items():
        print(f"{label:<16} {ms:>12.2f}")
    print(
        f"ratio notices/queue: {medians['notices'] / medians['queue']:.3f}; "
        f"ratio thread receipts/old: {medians['thread_receipts'] / medians['thread_old']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="per round and read")
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
