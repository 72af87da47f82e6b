"""The events webhook end to end: recorded with the change that causes it, delivered signed
by a real burst worker, at least once with backoff, refused where it points inside, and
invisible to other orgs."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import pytest_asyncio

from core.address_guard import AddressGuard
from core.clock import system_clock
from core.db import create_pool
from core.tenancy import org_connection, org_proof, self_bound_connection
from events.backoff import RetryPolicy
from events.delivery import DeliveryConfig, deliver_pass
from events.record import EventType, message_data, record_event
from events.transport import guarded_poster
from tests.integration.events_support import (
    CONTACT,
    deliver,
    event_rows,
    events_receiver,
    org_with_conversation,
)
from worker.settings import Settings


@pytest_asyncio.fixture(loop_scope="session")
async def worker_pool(settings: Settings, db: asyncpg.Connection) -> AsyncIterator[object]:
    """A pool as the worker's group role: row-level security applies."""
    pool = await create_pool(
        settings.database_url,
        max_size=2,
        app_role="skillet_worker",
        tenant_secret=settings.tenant_secret_value(),
    )
    yield pool
    await pool.close()


def _allowing(settings: Settings, **overrides: object) -> Settings:
    return settings.model_copy(update={"events_allow_private_urls": True, **overrides})


async def test_an_event_recorded_with_its_change_is_delivered_once_signed(
    settings: Settings, db: asyncpg.Connection, worker_pool: object
) -> None:
    async with events_receiver() as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        await db.execute(  # as the webhook stores a delivery's profile name
            "update conversations set contact_name = 'Ana Souza' where id = $1", conversation
        )
        async with org_connection(worker_pool, org) as conn:
            async with conn.transaction():  # the change and its event commit together
                message = await conn.fetchval(
                    "insert into messages (organization_id, conversation_id, direction,"
                    " channel, body) values ($1, $2, 'inbound', 'whatsapp', $3) returning id",
                    org,
                    conversation,
                    "quero falar com uma pessoa " * 20,
                )
                event_id = await record_event(
                    conn,
                    org,
                    EventType.MESSAGE_RECEIVED,
                    conversation,
                    message_data(message, "quero falar com uma pessoa " * 20),
                )
            with pytest.raises(RuntimeError):
                async with conn.transaction():  # a change rolled back leaves no event
                    await record_event(conn, org, EventType.TAKEN_OVER, conversation, {})
                    raise RuntimeError("rolled back")

        await deliver(_allowing(settings))
        await deliver(_allowing(settings))  # nothing left: not sent again

    assert event_id is not None
    [got] = receiver.received
    assert got.signed and got.event_type == "message.received" and got.event_id == str(event_id)
    assert got.body["id"] == str(event_id)
    assert got.body["organization_id"] == str(org)
    assert got.body["conversation_id"] == str(conversation)
    assert got.body["contact_id"] == CONTACT
    assert got.body["contact_name"] == "Ana Souza"
    assert got.body["occurred_at"].endswith("Z")
    assert got.body["data"]["message_id"] == str(message)
    assert len(got.body["data"]["text"]) == 200
    [row] = await event_rows(db)
    assert (row["status"], row["attempts"], row["last_error"]) == ("delivered", 1, None)


async def test_a_receiver_that_fails_first_gets_the_event_again_after_a_backoff(
    settings: Settings, db: asyncpg.Connection, worker_pool: object
) -> None:
    # A backoff far longer than two burst workers take on a loaded machine; the test then
    # moves the event's next attempt to now instead of sleeping the backoff out.
    quick = _allowing(settings, events_backoff_base_s=600.0, events_backoff_max_s=3600.0)
    async with events_receiver(statuses=[500]) as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        async with self_bound_connection(worker_pool) as conn, conn.transaction():
            await record_event(
                conn,
                org,
                EventType.HANDOFF_REQUESTED,
                conversation,
                {"reason": "cliente pediu um atendente", "cause": "customer"},
                proof=org_proof(conn, org),
            )
        await deliver(quick)
        [row] = await event_rows(db)
        assert (row["status"], row["attempts"]) == ("pending", 1)
        assert row["last_error"].startswith("http_500")
        due_in_s = await db.fetchval(
            "select extract(epoch from next_attempt_at - now()) from org_events"
        )
        assert 500 < due_in_s <= 600  # the policy's first backoff
        await deliver(quick)  # still inside its backoff: not sent
        assert len(receiver.received) == 1
        await db.execute("update org_events set next_attempt_at = now()")  # the backoff is over
        await deliver(quick)

    assert [r.signed for r in receiver.received] == [True, True]
    assert len({r.event_id for r in receiver.received}) == 1
    assert receiver.received[1].body["data"] == {
        "reason": "cliente pediu um atendente",
        "cause": "customer",
    }
    [row] = await event_rows(db)
    assert (row["status"], row["attempts"]) == ("delivered", 2)


async def test_attempts_run_out_and_the_event_is_kept_failed(
    settings: Settings, db: asyncpg.Connection, worker_pool: object
) -> None:
    once = _allowing(settings, events_max_attempts=1)
    async with events_receiver(statuses=[503]) as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        async with org_connection(worker_pool, org) as conn:
            await record_event(conn, org, EventType.RELEASED, conversation, {})
        await deliver(once)
        await deliver(once)
    assert len(receiver.received) == 1
    [row] = await event_rows(db)
    assert row["status"] == "failed" and "after 1 attempts" in row["last_error"]


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
async def test_a_url_pointing_inside_is_refused_at_delivery(
    settings: Settings, db: asyncpg.Connection, worker_pool: object, host: str
) -> None:
    async with events_receiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        # Written by the owner, past the checks of `orgs set` (as a name that resolved
        # outside when it was set would be).
        org, conversation = await org_with_conversation(db, f"https://{host}:{port}/hook")
        async with org_connection(worker_pool, org) as conn:
            await record_event(conn, org, EventType.TAKEN_OVER, conversation, {"held_by": "x"})
        await deliver(settings)  # SKILLET_EVENTS_ALLOW_PRIVATE_URLS unset
    assert receiver.received == []
    [row] = await event_rows(db)
    assert row["status"] == "failed"
    assert row["last_error"].startswith("events_url_refused")
    assert "loopback" in row["last_error"]


async def test_an_org_without_a_url_records_nothing(
    db: asyncpg.Connection, worker_pool: object
) -> None:
    org, conversation = await org_with_conversation(db, None)
    async with org_connection(worker_pool, org) as conn:
        assert await record_event(conn, org, EventType.TAKEN_OVER, conversation, {}) is None
    assert await event_rows(db) == []


async def test_another_org_never_sees_nor_records_an_orgs_events(
    db: asyncpg.Connection, worker_pool: object, settings: Settings
) -> None:
    org, conversation = await org_with_conversation(db, "https://93.184.215.14/h")
    other, other_conversation = await org_with_conversation(db, "https://93.184.215.14/o")
    async with org_connection(worker_pool, org) as conn:
        assert await record_event(conn, org, EventType.TAKEN_OVER, conversation, {})
    async with org_connection(worker_pool, other) as conn:
        assert await conn.fetchval("select count(*) from org_events") == 0
        assert await conn.fetchval("select array_agg(url) from org_event_settings") == [
            "https://93.184.215.14/o"
        ]
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="tenant_binding_refused"):
            await record_event(conn, org, EventType.TAKEN_OVER, conversation, {})
        with pytest.raises(asyncpg.PostgresError, match="conversation_not_found"):
            await record_event(conn, other, EventType.TAKEN_OVER, conversation, {})
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch("select secret from org_event_settings")
    api = await create_pool(
        settings.database_url,
        max_size=1,
        app_role="skillet_api",
        tenant_secret=settings.tenant_secret_value(),
    )
    try:
        async with org_connection(api, other) as conn:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):  # the worker's only
                await conn.fetch("select * from skillet_claim_events(10, 60)")
            with pytest.raises(asyncpg.InsufficientPrivilegeError):  # write-only
                await conn.fetch("select secret from org_event_settings")
            assert await record_event(conn, other, EventType.RELEASED, other_conversation, {})
    finally:
        await api.close()
    rows = await event_rows(db)
    assert sorted((r["organization_id"], r["type"]) for r in rows) == sorted(
        [(org, "conversation.taken_over"), (other, "conversation.released")]
    )
    assert uuid.UUID(str(rows[0]["id"]))


async def test_two_passes_at_once_never_send_one_event_twice(
    db: asyncpg.Connection, worker_pool: object
) -> None:
    async with events_receiver(delay_s=0.2) as receiver:
        org, conversation = await org_with_conversation(db, receiver.url)
        async with org_connection(worker_pool, org) as conn, conn.transaction():
            for n in range(10):
                await record_event(conn, org, EventType.RELEASED, conversation, {"n": n})
        config = DeliveryConfig(
            policy=RetryPolicy(),
            batch_size=3,
            timeout_s=5.0,
            allow_private=True,
            lease_s=60.0,
            budget_s=30.0,
        )
        async with guarded_poster(AddressGuard(allow_private=True), 5.0) as poster:
            reports = await asyncio.gather(
                *(deliver_pass(worker_pool, poster, config, clock=system_clock) for _ in range(2))
            )
    ids = [r.event_id for r in receiver.received]
    assert len(ids) == len(set(ids)) == 10
    assert sum(r.delivered for r in reports) == 10 and all(r.delivered for r in reports)
    assert {r["status"] for r in await event_rows(db)} == {"delivered"}
