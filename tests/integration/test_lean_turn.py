"""The lean turn: three statements a message, each binding its org itself,
on pooled connections that carry no org to their next user."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from conversation.holder import ConversationWakeup, run_conversation
from conversation.lease import ConversationLeases
from conversation.queries import (
    CommitOutcome,
    ReplyCommit,
    TurnCounts,
    commit_turn,
    continue_conversation,
    take_conversation,
)
from core.db import create_pool
from core.db_roles import WORKER_ROLE
from core.tenancy import org_connection, self_bound_connection
from tests.integration.support import create_org, store_inbound
from worker.resources import Resources
from worker.settings import Settings

CONTACT = "5511955551111"
BOUND = "select coalesce(current_setting('skillet.organization_id', true), '')"


async def _one_connection_pool(settings: Settings) -> Any:
    """The worker's kind of pool with a single connection, so each use meets the last one's."""
    return await create_pool(settings.database_url, min_size=1, max_size=1, app_role=WORKER_ROLE)


async def _commit(
    conn: Any, org: uuid.UUID, conversation: uuid.UUID, batch: list[uuid.UUID], token: uuid.UUID
) -> Any:
    return await commit_turn(
        conn,
        ReplyCommit(
            organization_id=org,
            conversation_id=conversation,
            channel="whatsapp",
            batch_ids=batch,
            first_received_at=datetime.now(UTC),
            body="resposta",
            counts=TurnCounts(used=("frete",), usage={"provider": "local", "calls": 1}),
            at=datetime.now(UTC),
            lease_token=token,
        ),
    )


async def test_a_self_bound_statement_leaves_no_org_for_the_next_user(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    conversation, _ = await store_inbound(resources.pool, org, "m1", CONTACT)
    pool = await _one_connection_pool(settings)
    try:
        async with self_bound_connection(pool) as conn:
            taken = await take_conversation(
                conn, org, conversation, uuid.uuid4(), ttl_s=30, limit=50, history_limit=10
            )
            assert taken is not None and [r.external_id for r in taken.burst.open.rows] == ["m1"]
            assert await conn.fetchval(BOUND) == ""  # bound only inside the statement
        async with pool.acquire() as conn:  # the next user: no org, so no org rows
            assert await conn.fetchval(BOUND) == ""
            assert await conn.fetchval("select count(*) from conversations") == 0
            # Without its own binding, a statement on such a connection sees nothing.
        async with self_bound_connection(pool) as conn:
            assert await conn.fetchval("select count(*) from messages") == 0
    finally:
        await pool.close()


async def test_a_session_binding_is_reset_even_after_a_self_bound_use(
    settings: Settings, db: asyncpg.Connection
) -> None:
    org = await create_org(db)
    pool = await _one_connection_pool(settings)
    try:
        async with self_bound_connection(pool):
            pass
        async with org_connection(pool, org) as conn:  # binds for the session
            assert await conn.fetchval(BOUND) == str(org)
        async with pool.acquire() as conn:
            assert await conn.fetchval(BOUND) == ""
        with pytest.raises(RuntimeError):
            async with self_bound_connection(pool) as conn:
                await conn.execute(
                    "select set_config('skillet.organization_id', $1, false)", str(org)
                )
                raise RuntimeError("a failed block gets the full reset")
        async with pool.acquire() as conn:
            assert await conn.fetchval(BOUND) == ""
    finally:
        await pool.close()


async def test_the_commit_claims_a_routed_reply_and_the_old_signature_does_not(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    channel = await db.fetchval(
        "insert into channels (organization_id, kind, address) values ($1, 'cloud_api', 'pn-1') "
        "returning id",
        org,
    )
    conversation, inbound = await store_inbound(resources.pool, org, "wamid.1", CONTACT)
    await db.execute(
        "insert into inbound_routes (organization_id, external_id, channel_id) values ($1, $2, $3)",
        org,
        "wamid.1",
        channel,
    )
    token = uuid.uuid4()
    async with self_bound_connection(resources.pool) as conn:
        assert await take_conversation(
            conn, org, conversation, token, ttl_s=30, limit=50, history_limit=10
        )
        committed = await _commit(conn, org, conversation, [inbound], token)
    assert committed.reply.outcome is CommitOutcome.REPLIED
    assert committed.claim is not None
    assert (committed.claim.route_kind, committed.claim.route_address) == ("cloud_api", "pn-1")
    assert committed.claim.reply_to_external_id == "wamid.1"
    claimed_at = "select delivery_claimed_at is not null from outbox where id = $1"
    assert await db.fetchval(claimed_at, committed.reply.outbox_id)
    # The usage the curator judges by and the day's tokens, in the same commit.
    assert await db.fetchval("select use_count from skill_usage where organization_id = $1", org)
    assert await db.fetchval("select turns from token_usage_daily where organization_id = $1", org)


async def test_the_reply_commit_has_one_signature(db: asyncpg.Connection) -> None:
    # Every caller (the turn, the after-hours commit) goes through the one form: no overload of
    # an earlier release is left to drift from it.
    rows = await db.fetch(
        "select p.proname, pg_get_function_identity_arguments(p.oid) as args from pg_proc p "
        "where p.proname in ('skillet_commit_turn', 'skillet_commit_reply')"
    )
    assert [r["proname"] for r in rows] == ["skillet_commit_turn"]
    assert rows[0]["args"].count(",") == 20 and "p_proof text" in rows[0]["args"]


async def test_continuing_marks_sent_then_lets_go_or_reads_what_came_in(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    conversation, inbound = await store_inbound(resources.pool, org, "m1", CONTACT)
    token = uuid.uuid4()
    async with self_bound_connection(resources.pool) as conn:
        await take_conversation(
            conn, org, conversation, token, ttl_s=30, limit=50, history_limit=10
        )
        committed = await _commit(conn, org, conversation, [inbound], token)
        await store_inbound(resources.pool, org, "m2", CONTACT)  # arrives during the send
        sent = (committed.reply.outbox_id, ("wamid.out.1",))
        step = await continue_conversation(
            conn, org, conversation, token, sent=sent, limit=50, history_limit=10
        )
        assert (step.sent, step.held, step.released) == (True, True, False)
        assert [r.external_id for r in step.burst.open.rows] == ["m2"]
        assert step.burst.history == [("inbound", "oi"), ("outbound", "resposta")]
        stranger = await continue_conversation(
            conn, org, conversation, uuid.uuid4(), sent=None, limit=50, history_limit=10
        )
        assert (stranger.held, stranger.released) == (False, False)
    receipt = "select count(*) from outbox_receipts where provider_message_id = 'wamid.out.1'"
    assert await db.fetchval(receipt) == 1


async def test_a_turn_costs_three_statements_on_the_pool(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    """Take, commit (with the claim), continue (mark sent + let go); no bind, no reset."""
    org = await create_org(db)
    pool = await _one_connection_pool(settings)
    statements: list[str] = []
    try:
        async with pool.acquire() as conn:  # loggers stay on the connection across uses
            conn.add_query_logger(lambda record: statements.append(record.query))
        deps = dataclasses.replace(
            resources.turn_deps, pool=pool, leases=ConversationLeases(pool, ttl_s=30)
        )
        conversation, inbound = await store_inbound(resources.pool, org, "m1", CONTACT)
        await run_conversation(  # warms this worker's catalog cache (a load: more statements)
            deps, ConversationWakeup(org, conversation, inbound, "m1"), job_id="j1"
        )
        _, inbound = await store_inbound(resources.pool, org, "m2", CONTACT)
        statements.clear()
        outcome = await run_conversation(
            deps, ConversationWakeup(org, conversation, inbound, "m2"), job_id="j2"
        )
    finally:
        await pool.close()
    assert outcome.status == "replied" and outcome.answered == ("m2",)
    functions = [q.split("from ")[-1].split("(")[0].strip() for q in statements]
    assert functions == [
        "skillet_take_conversation",
        "skillet_commit_turn",
        "skillet_continue_conversation",
    ]


# Called on every turn; SQL-language ones would be parsed and planned on every call.
TURN_FUNCTIONS = (
    "skillet_bind_org",
    "skillet_take_conversation",
    "skillet_read_burst",
    "skillet_commit_turn",
    "skillet_claim_outbox",
    "skillet_bump_usage",
    "skillet_bump_activation_daily",
    "skillet_bump_token_usage",
    "skillet_continue_conversation",
    "skillet_release_lease",
)
PLANNED_ONCE = (
    "skillet_take_conversation",
    "skillet_commit_turn",
    "skillet_continue_conversation",
)


async def test_the_turns_functions_keep_their_plans_for_the_session(
    db: asyncpg.Connection,
) -> None:
    rows = await db.fetch(
        """
        select p.proname, l.lanname, coalesce(p.proconfig, '{}') as config,
               pg_get_function_identity_arguments(p.oid) as args
        from pg_proc p join pg_language l on l.oid = p.prolang
        where p.proname = any($1::text[])
        """,
        list(TURN_FUNCTIONS),
    )
    # Take and continue have overloads with the org's proof (what the worker calls) and
    # without (the operator's role): the worker's are judged.
    called = [r for r in rows if r["proname"] not in PLANNED_ONCE or "p_proof" in r["args"]]
    assert {r["proname"] for r in called} == set(TURN_FUNCTIONS)
    assert {r["lanname"] for r in called} == {"plpgsql"}, [
        (r["proname"], r["args"]) for r in called if r["lanname"] != "plpgsql"
    ]
    generic = {r["proname"] for r in called if "plan_cache_mode=force_generic_plan" in r["config"]}
    assert generic == set(PLANNED_ONCE)
