"""Every change of a conversation's mode goes through skillet_change_mode, and its transitions
are conversation.mode's: for each mode and transition, the SQL and the readable rules agree."""

from __future__ import annotations

import itertools
import uuid

import asyncpg
import pytest

from conversation.mode import ConversationMode, Transition, next_mode
from conversation.mode_queries import change_mode
from core.tenancy import org_connection
from tests.integration.support import create_org, store_inbound
from worker.resources import Resources

pytestmark = pytest.mark.integration

PAIRS = list(itertools.product(ConversationMode, Transition))


async def _conversation_in(
    db: asyncpg.Connection, resources: Resources, mode: ConversationMode
) -> tuple[uuid.UUID, uuid.UUID]:
    org = await create_org(db)
    conversation, _ = await store_inbound(resources.pool, org, "wamid.m1", "5511999990001")
    held_by = "skt_someone" if mode is ConversationMode.HUMAN else None
    await db.execute(
        "update conversations set mode = $2, held_by = $3, mode_since = now() where id = $1",
        conversation,
        mode.value,
        held_by,
    )
    return org, conversation


@pytest.mark.parametrize(("mode", "transition"), PAIRS, ids=[f"{m}-{t}" for m, t in PAIRS])
async def test_the_sql_changes_mode_as_the_rules_say(
    db: asyncpg.Connection, resources: Resources, mode: ConversationMode, transition: Transition
) -> None:
    org, conversation = await _conversation_in(db, resources, mode)
    async with org_connection(resources.pool, org) as conn, conn.transaction():
        after = await change_mode(conn, conversation, transition, held_by="skt_person")
    expected = next_mode(mode, transition)
    assert after == expected
    stored = await db.fetchval("select mode from conversations where id = $1", conversation)
    assert stored == (expected or mode)


async def test_a_release_keeps_what_nobody_answered_as_context_unless_asked_to_answer(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org, conversation = await _conversation_in(db, resources, ConversationMode.HUMAN)
    pending = "select count(*) from messages where conversation_id = $1 and context_at is null"
    async with org_connection(resources.pool, org) as conn, conn.transaction():
        await change_mode(conn, conversation, Transition.RELEASE, keep_pending=False)
    assert await db.fetchval(pending, conversation) == 1
    await db.execute("update conversations set mode = 'human' where id = $1", conversation)
    async with org_connection(resources.pool, org) as conn, conn.transaction():
        await change_mode(conn, conversation, Transition.RELEASE)
    assert await db.fetchval(pending, conversation) == 0


# An assignment to the mode column: `set mode = ...` or `..., mode = 'human'` in a SET list.
WRITES_MODE = r"set\s+mode\s*=|,\s*mode\s*=\s*'(agent|waiting|human)'"


async def test_no_other_function_changes_a_mode(db: asyncpg.Connection) -> None:
    # The one home: no function but skillet_change_mode writes conversations.mode.
    rows = await db.fetch(
        "select proname from pg_proc where prosrc ~* $1 and proname <> 'skillet_change_mode'",
        WRITES_MODE,
    )
    assert [r["proname"] for r in rows] == []
