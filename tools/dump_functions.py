"""Write skillet_data/functions.sql: every function a migrated database defines, read back
from the catalog, each with its comment, grants and triggers, grouped by what it serves.

The numbered migrations stay what `skillet migrate` applies; this file is where a person reads
the current SQL (one definition per function, its COMMENT ON FUNCTION beside it). Run it after
adding a migration that creates, replaces, comments, grants or drops a function: a test fails
while the committed file differs from what the migrated test database holds.

Deterministic: the same schema writes the same bytes (functions in GROUPS order, overloads by
argument types, grantees and triggers by name; the owner, who varies by deployment, is left out).

Run (from the repo root):
  .venv/bin/python tools/dump_functions.py --fresh postgresql://postgres@127.0.0.1:5432/postgres
      creates a scratch database there, migrates it with the real runner, writes, drops it
  .venv/bin/python tools/dump_functions.py [URL]
      reads a database migrated already (URL, else DATABASE_URL)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

# Runnable as a script from the repo root without installing: put the repo on the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg

from core.db import connect, quote_ident, with_database
from skillet_data import FUNCTIONS_SQL
from worker.migrate import DEFAULT_MIGRATIONS_DIR, apply_migrations

RERUN = (
    "run tools/dump_functions.py --fresh postgresql://postgres@127.0.0.1:5432/postgres "
    "(skillet_data/functions.sql must show what the migrations define)"
)


@dataclass(frozen=True)
class Group:
    title: str
    about: str
    names: tuple[str, ...]  # in reading order


GROUPS: tuple[Group, ...] = (
    Group(
        "Tenancy",
        "Who a statement acts for; every tenant_isolation policy compares with it.",
        (
            "skillet_current_org",
            "skillet_proven_org",
            "skillet_org_proof_valid",
            "skillet_hmac_pad",
            "skillet_hmac_sha512",
            "skillet_bind_org",
            "skillet_is_system",
        ),
    ),
    Group(
        "API and console: the way in",
        "Before an org is known: a key, a session, a person's e-mail or an invitation's link "
        "names it (SECURITY DEFINER).",
        (
            "skillet_api_key_lookup",
            "skillet_console_session_lookup",
            "skillet_person_sign_in_lookup",
            "skillet_person_sign_in_failed",
            "skillet_forget_sign_in_failures",
            "skillet_invitation_lookup",
        ),
    ),
    Group(
        "Inbound: the webhook",
        "A webhook event's receiving number or WAHA session names its org and channel; one "
        "statement stores the message.",
        (
            "skillet_channel_by_address",
            "skillet_waha_channel_key",
            "skillet_waha_signature_valid",
            "skillet_receive_inbound",
            "skillet_receive_quoting",
            "skillet_store_inbound",
            "skillet_stored_inbound",
            "skillet_message_by_external_id",
            "skillet_receive_reaction",
            "skillet_claim_read",
            "skillet_read_target",
            "skillet_presence_target",
        ),
    ),
    Group(
        "A number's own credentials",
        "Its Cloud API token and WAHA API key: stored by the API for its org, read for one "
        "number of the bound org by the send path and the API's verification.",
        (
            "skillet_channel_secrets",
            "skillet_store_channel_secrets",
            "skillet_fail_parked_outside_window",
        ),
    ),
    Group(
        "The owner's phone: echoes",
        "The webhook stores an echo of a message the business's number sent; the worker settles "
        "it after a grace: one of our sends, or the phone's message taking the conversation.",
        (
            "skillet_receive_echo",
            "skillet_echo_is_ours",
            "skillet_settle_echo",
            "skillet_echoes_pending_since",
        ),
    ),
    Group(
        "The turn: take, commit, continue",
        "A turn is three statements (conversation.queries), each binding its org itself.",
        (
            "skillet_take_conversation",
            "skillet_read_burst",
            "skillet_commit_turn",
            "skillet_commit_away",
            "skillet_change_mode",
            "skillet_continue_conversation",
            "skillet_release_lease",
            "skillet_conversations_waiting",
            "skillet_conversation_mode_tick",
            "skillet_conversation_mode_counts",
            "skillet_contact_opted_out",
            "skillet_fire_due_followups",
            "skillet_template_channels",
        ),
    ),
    Group(
        "Media customers send",
        "The retention cron's cross-org scan and forgetting of stored media bytes.",
        ("skillet_expired_media", "skillet_forget_media"),
    ),
    Group(
        "What a turn counts",
        "Usage, daily rollups and activation telemetry (written by the commit and the writer).",
        (
            "skillet_bump_usage",
            "skillet_bump_file_reads",
            "skillet_bump_activation_daily",
            "skillet_bump_token_usage",
            "skillet_record_activations",
        ),
    ),
    Group(
        "Outbox and delivery",
        "A reply leaves once: claimed before its send, failed (never re-sent) when abandoned.",
        (
            "skillet_claim_outbox",
            "skillet_outbox_route",
            "skillet_fail_abandoned_claims",
            "skillet_receipt_rank",
        ),
    ),
    Group(
        "Events webhook",
        "What the business is told: recorded with the change that causes it, delivered later.",
        (
            "skillet_record_event",
            "skillet_conversation_mode_event",
            "skillet_message_received_event",
            "skillet_claim_events",
            "skillet_settle_events",
            "skillet_prune_org_events",
        ),
    ),
    Group(
        "The skill catalog",
        "What an org's agent loads is versioned by a revision each worker's cache checks.",
        ("bump_skill_catalog_revision",),
    ),
    Group(
        "The curator",
        "Idle agent-authored skills move active -> stale -> archived; nothing is deleted.",
        (
            "curator_next_state",
            "skillet_curator_schedule",
            "skillet_curator_pass",
            "skillet_prune_curator_runs",
        ),
    ),
    Group(
        "Jobs",
        "What a job could not do, kept for an operator or the org to requeue.",
        ("skillet_record_dead_letter",),
    ),
    Group(
        "The Painel's daily counts",
        "Triggers on messages and conversations count each org's day (its business-hours time "
        "zone) for GET /v1/insights; a message's counts wait in insight_pending until a fold.",
        (
            "skillet_org_local_time",
            "skillet_insight_bucket",
            "skillet_insight_conversation_day",
            "skillet_insight_message",
            "skillet_insight_conversation",
            "skillet_insight_fold",
        ),
    ),
)
UNGROUPED = Group(
    "Not grouped yet",
    "Add these to GROUPS in tools/dump_functions.py.",
    (),
)

# Every function of a non-system schema but extensions' own (deptype 'e'); aggregates and
# window functions have no pg_get_functiondef.
LIST_FUNCTIONS = r"""
select p.oid, p.proname as name,
       format('%I.%I(%s)', n.nspname, p.proname, coalesce(
           (select string_agg(format_type(t.oid, null), ', ' order by t.n)
            from unnest(p.proargtypes::oid[]) with ordinality as t(oid, n)), '')) as signature,
       pg_get_functiondef(p.oid) as definition,
       obj_description(p.oid, 'pg_proc') as comment,
       p.proacl is not null as explicit_acl,
       coalesce(array(
           select distinct case when a.grantee = 0 then 'PUBLIC'
                                else quote_ident(pg_get_userbyid(a.grantee)) end
           from aclexplode(p.proacl) a
           where a.privilege_type = 'EXECUTE' and a.grantee <> p.proowner), '{}') as grantees
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
where n.nspname <> 'information_schema' and n.nspname not like 'pg\_%'
  and p.prokind in ('f', 'p')
  and not exists (
      select 1 from pg_depend d
      where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
"""

LIST_TRIGGERS = """
select t.tgfoid as function_oid, t.tgrelid::regclass::text as table_name, t.tgname as name,
       pg_get_triggerdef(t.oid, true) as definition
from pg_trigger t
where not t.tgisinternal
"""


@dataclass(frozen=True)
class Function:
    name: str
    signature: str  # schema.name(argument types): what COMMENT and GRANT name
    definition: str  # pg_get_functiondef: CREATE OR REPLACE FUNCTION ... $function$
    comment: str | None
    explicit_acl: bool  # False: the default (EXECUTE to PUBLIC)
    grantees: tuple[str, ...]  # EXECUTE, the owner aside
    triggers: tuple[str, ...]  # CREATE TRIGGER statements that run it


async def fetch_functions(conn: asyncpg.Connection) -> list[Function]:
    """The schema's functions with their comments, grants and triggers, unordered."""
    triggers: dict[int, list[tuple[str, str, str]]] = {}
    for t in await conn.fetch(LIST_TRIGGERS):
        triggers.setdefault(t["function_oid"], []).append(
            (t["table_name"], t["name"], t["definition"])
        )
    return [
        Function(
            name=r["name"],
            signature=r["signature"],
            definition=r["definition"],
            comment=r["comment"],
            explicit_acl=r["explicit_acl"],
            grantees=tuple(sorted(r["grantees"])),
            triggers=tuple(d for _, _, d in sorted(triggers.get(r["oid"], []))),
        )
        for r in await conn.fetch(LIST_FUNCTIONS)
    ]


def grouped(functions: list[Function]) -> list[tuple[Group, list[Function]]]:
    """Functions under their group, in GROUPS order (overloads by signature); the ones no
    group names come last, under UNGROUPED; empty groups are left out."""
    by_name: dict[str, list[Function]] = {}
    for f in functions:
        by_name.setdefault(f.name, []).append(f)
    out: list[tuple[Group, list[Function]]] = []
    for group in GROUPS:
        members = [f for name in group.names for f in sorted_overloads(by_name.pop(name, []))]
        if members:
            out.append((group, members))
    rest = [f for name in sorted(by_name) for f in sorted_overloads(by_name[name])]
    if rest:
        out.append((UNGROUPED, rest))
    return out


def sorted_overloads(functions: list[Function]) -> list[Function]:
    return sorted(functions, key=lambda f: f.signature)


HEADER = """\
-- GENERATED by tools/dump_functions.py: do not edit by hand.
--
-- Every function the schema defines today, as PostgreSQL holds it after `skillet migrate`
-- (pg_get_functiondef), each under its COMMENT ON FUNCTION and followed by its grants and
-- the triggers that run it, grouped by what it serves. Functions that later migrations
-- dropped are not here; extensions' functions are left out.
--
-- This file is for reading. The numbered migrations in skillet_data/migrations/ remain what
-- `skillet migrate` applies: change a function with a new migration, then regenerate:
--   .venv/bin/python tools/dump_functions.py --fresh postgresql://postgres@127.0.0.1:5432/postgres
-- tests/integration/test_function_file.py fails while this file differs from the schema.
--
-- Grants: EXECUTE for each role but the owner (the role that runs `skillet migrate`, which
-- also owns every SECURITY DEFINER function here). A function without REVOKE/GRANT lines
-- keeps PostgreSQL's default: anyone may call it (row-level security still applies).
"""


def render(functions: list[Function]) -> str:
    """The file's text (pure: the same functions give the same bytes)."""
    parts = [HEADER]
    for group, members in grouped(functions):
        rule = "-- " + "=" * 94
        parts.append(f"\n{rule}\n-- {group.title}\n-- {group.about}\n{rule}\n")
        parts.extend(_render_function(f) for f in members)
    return "".join(parts)


def _render_function(f: Function) -> str:
    lines = ["", _comment_statement(f), f.definition.rstrip("\n") + ";"]
    if f.explicit_acl:
        grants = [
            f"GRANT EXECUTE ON FUNCTION {f.signature} TO {grantee};" for grantee in f.grantees
        ]
        if "PUBLIC" not in f.grantees:
            grants.insert(0, f"REVOKE ALL ON FUNCTION {f.signature} FROM PUBLIC;")
        lines.extend(grants)
    lines.extend(f"{t};" for t in f.triggers)
    return "\n".join(lines) + "\n"


COMMENT_WIDTH = 96  # characters, the migrations' line length minus a margin


def _comment_statement(f: Function) -> str:
    if f.comment is None:
        return f"COMMENT ON FUNCTION {f.signature} IS NULL;  -- says nothing yet: add a COMMENT"
    # Comments are paragraphs, wrapped where they were written (after `IS $$` in a
    # migration); rewrapped here to read alike. Dollar quotes keep apostrophes as written.
    text = textwrap.fill(" ".join(f.comment.split()), width=COMMENT_WIDTH)
    quoted = f"$${text}$$" if "$$" not in text else _literal(text)
    return f"COMMENT ON FUNCTION {f.signature} IS\n{quoted};"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


async def dump(conn: asyncpg.Connection) -> str:
    """The file's text for the database `conn` is connected to."""
    # Names visible on the search path print unqualified (a trigger's table, a type): the
    # same path everywhere keeps the bytes the same whatever the connection's default.
    async with conn.transaction():
        await conn.execute("set local search_path = pg_catalog, public")
        return render(await fetch_functions(conn))


@asynccontextmanager
async def fresh_database(admin_url: str) -> AsyncIterator[str]:
    """A scratch database on `admin_url`'s server, migrated by the real runner, then dropped."""
    name = f"skillet_dump_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(admin_url)
    try:
        await admin.execute(f"create database {quote_ident(name)}")
        try:
            url = with_database(admin_url, name)
            conn = await connect(url)
            try:
                await apply_migrations(conn, DEFAULT_MIGRATIONS_DIR)
            finally:
                await conn.close()
            yield url
        finally:
            await admin.execute(f"drop database if exists {quote_ident(name)} with (force)")
    finally:
        await admin.close()


async def generate(url: str, *, fresh: bool) -> str:
    """The file's text for the database at `url` (with `fresh`: for a scratch database
    migrated on that server)."""
    async with fresh_database(url) if fresh else _as_is(url) as database_url:
        conn = await connect(database_url)
        try:
            return await dump(conn)
        finally:
            await conn.close()


@asynccontextmanager
async def _as_is(url: str) -> AsyncIterator[str]:
    yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", help="a migrated database (default: DATABASE_URL)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="treat URL as a server to create, migrate and drop a scratch database on",
    )
    parser.add_argument("--out", type=Path, default=FUNCTIONS_SQL)
    args = parser.parse_args(argv)
    url = args.url or os.environ.get("DATABASE_URL")
    if not url:
        parser.error("give a database URL or set DATABASE_URL")
    text = asyncio.run(generate(url, fresh=args.fresh))
    args.out.write_text(text, encoding="utf-8")
    count = text.count("\nCREATE OR REPLACE FUNCTION ")
    print(f"wrote {count} functions to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
