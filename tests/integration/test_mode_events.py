"""The events webhook follows the conversation's mode: a takeover, a customer's message while
a person holds the conversation and the release each reach the business once, signed, from the
same transaction as the change (the triggers of skillet_conversation_mode_event)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest_asyncio

from conversation.person_actions import Actor, release, take_over
from core.db import create_pool
from core.tenancy import org_connection
from tests.integration.events_support import deliver, events_receiver, org_with_conversation
from worker.settings import Settings


@pytest_asyncio.fixture(loop_scope="session")
async def api_pool(settings: Settings, db: asyncpg.Connection) -> AsyncIterator[object]:
    """A pool as the API's group role: row-level security applies."""
    pool = await create_pool(
        settings.database_url,
        max_size=2,
        app_role="skillet_api",
        tenant_secret=settings.tenant_secret_value(),
    )
    yield pool
    await pool.close()


async def _customer_writes(
    db: asyncpg.Connection, org: uuid.UUID, conv: uuid.UUID, text: str
) -> None:
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel,"
        " external_id, body) values ($1, $2, 'inbound', 'whatsapp', $3, $4)",
        org,
        conv,
        f"wamid.{uuid.uuid4().hex}",
        text,
    )


async def test_takeover_message_and_release_reach_the_business_in_order(
    settings: Settings, db: asyncpg.Connection, api_pool: object
) -> None:
    allowing = settings.model_copy(update={"events_allow_private_urls": True})
    async with events_receiver() as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        await _customer_writes(db, org, conversation, "oi, tudo bem?")  # the agent's: no event
        actor = Actor(org, "sk_live_ab12", may_force=False)
        async with org_connection(api_pool, org) as conn:
            await take_over(conn, actor, conversation, force=False)
        await _customer_writes(db, org, conversation, "alguém aí?")
        async with org_connection(api_pool, org) as conn:
            await release(conn, actor, conversation, answer_pending=False)
        await _customer_writes(db, org, conversation, "obrigado")  # the agent's again
        await deliver(allowing)

    got = [(r.event_type, r.signed) for r in receiver.received]
    assert got == [
        ("conversation.taken_over", True),
        ("message.received", True),
        ("conversation.released", True),
    ]
    taken, message, released = (r.body for r in receiver.received)
    assert taken["data"] == {"held_by": "sk_live_ab12", "cause": "console", "from": "agent"}
    assert message["data"]["text"] == "alguém aí?" and message["data"]["mode"] == "human"
    assert released["data"] == {"from": "human", "held_by": "sk_live_ab12"}
    assert {b["conversation_id"] for b in (taken, message, released)} == {str(conversation)}


async def test_a_handoff_by_the_turn_is_an_event_and_an_org_without_a_url_gets_none(
    settings: Settings, db: asyncpg.Connection
) -> None:
    allowing = settings.model_copy(update={"events_allow_private_urls": True})
    async with events_receiver() as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        quiet, other = await org_with_conversation(db, None, name="Sem URL")
        for org_id, conv in ((org, conversation), (quiet, other)):
            await db.execute(
                "update conversations set mode = 'waiting', mode_cause = 'tool',"
                " mode_reason = 'quer negociar o preço', mode_since = now() where id = $1",
                conv,
            )
            await _customer_writes(db, org_id, conv, "?")
        await deliver(allowing)

    assert [r.event_type for r in receiver.received] == [
        "conversation.handoff_requested",
        "message.received",
    ]
    assert receiver.received[0].body["data"] == {"cause": "tool", "reason": "quer negociar o preço"}
    assert (
        await db.fetchval("select count(*) from org_events where organization_id = $1", quiet) == 0
    )
