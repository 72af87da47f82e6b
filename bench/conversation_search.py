"""Conversas' search beside the plain list: milliseconds per first page, and their ratio.

Run: .venv/bin/python bench/conversation_search.py [--conversations N] [--messages M] [--rounds R]

One org of N conversations (each with a profile name) and M customer messages of about 120
characters (1 in 200 says "pix"), beside another org of the same size (its rows share the
tables, never the answers), on the Postgres at DATABASE_URL (a database of its own, dropped at
the end). Each query is conversation.person_queries.list_conversation_views as the API runs it
(skillet_api, the org bound): the first page of 50, plain; searched for a word 1 in 200
messages hold (`pix`), for a word none holds (the search reads its whole window), for a
name, for a number; with `unanswered=true`. Interleaved rounds, medians. The search's bounds
(SEARCH_MESSAGES newest customer messages, SEARCH_CHARS each) keep the last lines flat as M
grows past the window.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

import _script  # noqa: F401  (first: keeps bench/ off sys.path)
import asyncpg

from conversation.person_queries import (
    SEARCH_MESSAGES,
    ConversationFilter,
    list_conversation_views,
)
from conversation.search import search_patterns
from core.db import connect, create_pool, with_database
from core.db_roles import API_ROLE
from core.organizations import insert_organization
from core.tenancy import org_connection
from dev.env import load_settings
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

PAGE = 50
WORDS = (
    "bom dia queria saber o preço do produto e se vocês entregam no meu bairro hoje ainda "
    "ou só amanhã porque preciso logo obrigado"
)


def _search(text: str) -> ConversationFilter:
    patterns = search_patterns(text)
    return ConversationFilter(text_pattern=patterns.regex, number_pattern=patterns.number)


QUERIES: dict[str, ConversationFilter] = {
    "list": ConversationFilter(),
    "q=pix (1 in 200)": _search("pix"),
    "q=zzqx (no hit)": _search("zzqx"),
    "q=name": _search("cliente 4242"),
    "q=number": _search("9000-4242"),
    "unanswered": ConversationFilter(unanswered=True),
}


async def _seed(
    conn: asyncpg.Connection, org: uuid.UUID, conversations: int, messages: int
) -> None:
    await conn.execute(
        """insert into conversations (organization_id, channel, contact_id, contact_name,
                                      created_at)
           select $1, 'whatsapp', '55119' || lpad(i::text, 8, '0'), 'Cliente ' || i,
                  now() - make_interval(secs => $2 - i)
           from generate_series(1, $2) i""",
        org,
        conversations,
    )
    await conn.execute(
        """insert into messages (organization_id, conversation_id, direction, channel, body,
                                 received_at, created_at)
           select $1, c.id, 'inbound', 'whatsapp',
                  case when i % 200 = 0 then 'aceitam pix? ' else '' end || $4 || ' ' || i,
                  now() - make_interval(secs => $3 - i), now() - make_interval(secs => $3 - i)
           from generate_series(1, $3) i
           join lateral (select id from conversations
                         where organization_id = $1 and contact_id =
                               '55119' || lpad((1 + i % $2)::text, 8, '0')) c on true""",
        org,
        conversations,
        messages,
        WORDS,
    )


async def _time_ms(conn: asyncpg.Connection, org: uuid.UUID, where: ConversationFilter) -> float:
    started = time.perf_counter()
    await list_conversation_views(conn, org, mode=None, after=None, limit=PAGE + 1, where=where)
    return (time.perf_counter() - started) * 1000


async def _main(args: argparse.Namespace) -> None:
    base = load_settings()
    name = f"skillet_search_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(with_database(base.database_url, "postgres"))
    await admin.execute(f'create database "{name}"')
    database_url = with_database(base.database_url, name)
    org, other = uuid.uuid4(), uuid.uuid4()
    try:
        conn = await connect(database_url)
        try:
            await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            for n, each in enumerate((org, other)):
                await insert_organization(conn, each, f"Org {n}")
                await _seed(conn, each, args.conversations, args.messages)
            await conn.execute("analyze")
        finally:
            await conn.close()
        pool = await create_pool(database_url, min_size=1, max_size=1, app_role=API_ROLE)
        timings: dict[str, list[float]] = {label: [] for label in QUERIES}
        try:
            async with org_connection(pool, org) as bound:
                for where in QUERIES.values():  # warm up (plans, caches)
                    await _time_ms(bound, org, where)
                for _ in range(args.rounds):
                    for label, where in QUERIES.items():
                        timings[label].append(await _time_ms(bound, org, where))
        finally:
            await pool.close()
    finally:
        await admin.execute(f'drop database if exists "{name}" with (force)')
        await admin.close()
    print(
        f"{args.conversations:,} conversations, {args.messages:,} customer messages per org "
        f"(2 orgs); the search window: the newest {SEARCH_MESSAGES:,} messages"
    )
    plain = statistics.median(timings["list"])
    for label, values in timings.items():
        median = statistics.median(values)
        print(f"{label:<18} {median:8.1f} ms   x{median / plain:5.1f} the plain list")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=20_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
