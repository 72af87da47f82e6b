"""skillet_data/functions.sql is what the migrated schema defines: every function, its comment,
grants and triggers, regenerated from the session's database (migrated by the real runner)."""

from __future__ import annotations

import re

import asyncpg

from conversation.queries import CommitOutcome
from core.db import connect
from skillet_data import FUNCTIONS_SQL
from tools.dump_functions import GROUPS, RERUN, dump, fetch_functions


async def test_the_committed_file_is_what_the_migrations_define(database_url: str) -> None:
    conn = await connect(database_url)
    try:
        generated = await dump(conn)
    finally:
        await conn.close()
    assert FUNCTIONS_SQL.read_text(encoding="utf-8") == generated, RERUN


async def test_every_function_is_grouped_and_says_what_it_is_for(database_url: str) -> None:
    conn: asyncpg.Connection = await connect(database_url)
    try:
        functions = await fetch_functions(conn)
    finally:
        await conn.close()
    grouped = {name for group in GROUPS for name in group.names}
    ungrouped = sorted(f.name for f in functions if f.name not in grouped)
    assert not ungrouped, f"add {ungrouped} to GROUPS in tools/dump_functions.py, then {RERUN}"
    silent = sorted(f.signature for f in functions if not (f.comment or "").strip())
    assert not silent, f"give {silent} a COMMENT ON FUNCTION in a new migration, then {RERUN}"
    # A name in GROUPS that no longer exists (dropped, renamed) is a stale map: keep it true.
    assert grouped == {f.name for f in functions}, sorted(grouped - {f.name for f in functions})


async def test_the_commit_returns_exactly_the_outcomes_python_knows(database_url: str) -> None:
    conn: asyncpg.Connection = await connect(database_url)
    try:
        functions = await fetch_functions(conn)
    finally:
        await conn.close()
    # The one reply commit, and the after-hours commit, which returns skillet_commit_turn's
    # outcomes or its own.
    commits = [f for f in functions if f.name == "skillet_commit_turn"]
    returned = {o for f in commits for o in re.findall(r"outcome := '(\w+)'", f.definition)}
    [away] = [f for f in functions if f.name == "skillet_commit_away"]
    kept = set(re.findall(r"outcome := '(\w+)'", away.definition))
    assert returned | kept == set(CommitOutcome)
    assert kept - returned == {CommitOutcome.KEPT}
