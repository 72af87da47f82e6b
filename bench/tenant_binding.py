"""Statements/s of a tenant read under the old org binding (a setting anyone may write) and
under the proof-checked one (skillet_bind_org with a proof), side by side, and their ratio.

Run: .venv/bin/python bench/tenant_binding.py [--statements N] [--rounds R]
The read: one conversation's last 20 messages, `select id, body from ... where
conversation_id = $1 order by created_at desc limit 20`, as skillet_worker with the org bound
for the session (as `org_connection` binds), on tables with forced row-level security:
  * old:   a copy of `messages` whose policy is 0020's, `organization_id =
           skillet_current_org()` with 0006's function (reads the setting);
  * proof: `messages` itself, whose policy since 0025 is `organization_id = (select
           skillet_current_org())`, a SECURITY DEFINER check of the proof (HMAC-SHA256).
Two measures of each: `client`, statements/s over one connection (a round trip each, what a
process sees), and `server`, the same statement run N times inside one PL/pgSQL loop (no round
trips: the binding's own cost shows undiluted). Interleaved rounds, medians. On the Postgres at
DATABASE_URL (a database of its own, dropped at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

from core.db import connect, create_pool, with_database
from core.db_roles import WORKER_ROLE
from core.organizations import insert_organization
from core.tenancy import org_connection
from dev.env import load_settings
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

ORGS = 20
MESSAGES_PER_ORG = 2_000
CONVERSATIONS_PER_ORG = 50

OLD_STYLE = """
create function bench_setting_org() returns uuid
language sql stable as $$
    select nullif(current_setting('skillet.organization_id', true), '')::uuid
$$;
create table bench_messages_old (like messages including all);
insert into bench_messages_old select * from messages;
analyze bench_messages_old;
alter table bench_messages_old enable row level security;
alter table bench_messages_old force row level security;
create policy tenant_isolation on bench_messages_old
    using (organization_id = bench_setting_org())
    with check (organization_id = bench_setting_org());
grant select on bench_messages_old to skillet_worker;
"""

READ = "select id, body from {table} where conversation_id = $1 order by created_at desc limit 20"
SERVER_LOOP = """
do $$
declare
    v_conversation uuid := current_setting('bench.conversation')::uuid;
begin
    for i in 1..{n} loop
        perform id, body from {table} where conversation_id = v_conversation
        order by created_at desc limit 20;
    end loop;
end
$$
"""
TABLES = {"old": "bench_messages_old", "proof": "messages"}


async def _seed(conn: asyncpg.Connection) -> tuple[uuid.UUID, uuid.UUID]:
    """ORGS orgs with their conversations and messages; (an org, one of its conversations)."""
    first: tuple[uuid.UUID, uuid.UUID] | None = None
    for n in range(ORGS):
        org = uuid.uuid4()
        await insert_organization(conn, org, f"Org {n}")
        conversations = await conn.fetch(
            """insert into conversations (organization_id, channel, contact_id)
               select $1, 'whatsapp', '5511' || lpad(i::text, 8, '0')
               from generate_series(1, $2) i returning id""",
            org,
            CONVERSATIONS_PER_ORG,
        )
        ids = [r["id"] for r in conversations]
        await conn.execute(
            """insert into messages (organization_id, conversation_id, direction, channel, body)
               select $1, ($2::uuid[])[1 + i % cardinality($2::uuid[])], 'inbound',
                      'whatsapp', 'mensagem ' || i
               from generate_series(1, $3) i""",
            org,
            ids,
            MESSAGES_PER_ORG,
        )
        first = first or (org, ids[0])
    await conn.execute("analyze")
    await conn.execute(OLD_STYLE)
    assert first is not None
    return first


async def _client_rate(
    conn: asyncpg.Connection, table: str, conversation: uuid.UUID, n: int
) -> float:
    statement = await conn.prepare(READ.format(table=table))
    started = time.perf_counter()
    for _ in range(n):
        rows = await statement.fetch(conversation)
    elapsed = time.perf_counter() - started
    assert len(rows) == 20, f"{table}: the bound org must see its rows ({len(rows)})"
    return n / elapsed


async def _server_rate(conn: asyncpg.Connection, table: str, n: int) -> float:
    started = time.perf_counter()
    await conn.execute(SERVER_LOOP.format(table=table, n=n))
    return n / (time.perf_counter() - started)


async def _main(args: argparse.Namespace) -> float:
    base = load_settings()
    name = f"skillet_tenant_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    database_url = with_database(base.database_url, name)
    try:
        conn = await connect(database_url)
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            org, conversation = await _seed(conn)
        finally:
            await conn.close()
        pool = await create_pool(database_url, min_size=1, max_size=1, app_role=WORKER_ROLE)
        try:
            async with org_connection(pool, org) as bound:
                await bound.execute(
                    "select set_config('bench.conversation', $1, false)", str(conversation)
                )
                client: dict[str, list[float]] = {label: [] for label in TABLES}
                server: dict[str, list[float]] = {label: [] for label in TABLES}
                for table in TABLES.values():  # warm up (plans, caches)
                    await _client_rate(bound, table, conversation, 200)
                    await _server_rate(bound, table, 200)
                for _ in range(args.rounds):  # interleaved: machine noise hits both alike
                    for label, table in TABLES.items():
                        client[label].append(
                            await _client_rate(bound, table, conversation, args.statements)
                        )
                        server[label].append(await _server_rate(bound, table, args.statements))
        finally:
            await pool.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    print(f"{'binding':<8} {'client stmts/s':>15} {'server stmts/s':>15}")
    medians = {}
    for label in TABLES:
        medians[label] = (statistics.median(client[label]), statistics.median(server[label]))
        print(f"{label:<8} {medians[label][0]:>15,.0f} {medians[label][1]:>15,.0f}")
    client_ratio = medians["proof"][0] / medians["old"][0]
    server_ratio = medians["proof"][1] / medians["old"][1]
    cost_us = (1 / medians["proof"][1] - 1 / medians["old"][1]) * 1e6
    print(f"ratio proof/old: client {client_ratio:.3f}, server {server_ratio:.3f}")
    print(f"the proof's cost per statement (server): {cost_us:.1f} us")
    return client_ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=3_000, help="per round and binding")
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
