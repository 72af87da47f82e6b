"""SQL of one turn: org/agent lookup, conversation, messages, outbox, activation rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from turn.agent_queries import create_agent


@dataclass(frozen=True)
class OrgAgent:
    organization_id: uuid.UUID
    system_prompt: str | None


FETCH_ORG_AGENT = """
select o.id, a.system_prompt
from organizations o
left join lateral (
    select system_prompt from agents
    where organization_id = o.id order by created_at, id limit 1
) a on true
where o.id = $1
"""


async def fetch_org_agent(conn: asyncpg.Connection, organization_id: uuid.UUID) -> OrgAgent | None:
    """The org and its agent's system prompt (None when the org has no agent yet)."""
    row = await conn.fetchrow(FETCH_ORG_AGENT, organization_id)
    if row is None:
        return None
    return OrgAgent(organization_id=row["id"], system_prompt=row["system_prompt"])


SET_LOCAL_ASYNC_COMMIT = "set local synchronous_commit = off"


async def set_local_async_commit(conn: asyncpg.Connection) -> None:
    """Let the current transaction commit without waiting for its WAL flush.

    Only for writes a crash may lose: a later synchronous commit on the same server flushes
    the WAL up to and past this one, and until then the job is still in Redis and re-runs.
    """
    await conn.execute(SET_LOCAL_ASYNC_COMMIT)


INSERT_INBOUND_MESSAGE = """
insert into messages
    (organization_id, conversation_id, direction, channel, external_id, body, sent_at, received_at,
     kind, expects_reply)
values ($1, $2, 'inbound', $3, $4, $5, $6, $7, $8, $9)
on conflict (organization_id, channel, external_id) where direction = 'inbound' do nothing
returning id
"""

FETCH_INBOUND_MESSAGE_ID = """
select id from messages
where organization_id = $1 and channel = $2 and external_id = $3 and direction = 'inbound'
"""


async def fetch_inbound_message_id(
    conn: asyncpg.Connection, organization_id: uuid.UUID, channel: str, external_id: str
) -> uuid.UUID | None:
    found: uuid.UUID | None = await conn.fetchval(
        FETCH_INBOUND_MESSAGE_ID, organization_id, channel, external_id
    )
    return found


async def insert_inbound_message(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    channel: str,
    external_id: str,
    body: str,
    sent_at: datetime,
    received_at: datetime,
    kind: str = "text",
    expects_reply: bool = True,
) -> tuple[uuid.UUID, bool]:
    """Persist an inbound message once; returns (message id, whether this call created it)."""
    created = await conn.fetchval(
        INSERT_INBOUND_MESSAGE,
        organization_id,
        conversation_id,
        channel,
        external_id,
        body,
        sent_at,
        received_at,
        kind,
        expects_reply,
    )
    if created is not None:
        return created, True
    existing = await fetch_inbound_message_id(conn, organization_id, channel, external_id)
    assert existing is not None  # the insert conflicted with it
    return existing, False


@dataclass(frozen=True)
class OutboxRow:
    id: uuid.UUID
    message_id: uuid.UUID  # the outbound (reply) message
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    body: str
    status: str

    @classmethod
    def pending(
        cls,
        organization_id: uuid.UUID,
        conversation_id: uuid.UUID,
        outbox_id: uuid.UUID,
        reply_id: uuid.UUID,
        body: str,
    ) -> OutboxRow:
        """A committed reply not yet handed to its channel."""
        return cls(outbox_id, reply_id, organization_id, conversation_id, body, "pending")


# Sent, and one receipt per message id the provider answered with (its statuses update them).
UPDATE_OUTBOX_SENT = """
with sent as (
    update outbox set status = 'sent', sent_at = now(), attempts = attempts + 1
    where id = $1 and status = 'pending'
    returning id, organization_id
), receipts as (
    insert into outbox_receipts (organization_id, provider_message_id, outbox_id)
    select sent.organization_id, provider_id, sent.id
    from sent, unnest($2::text[]) as provider_id
    on conflict (organization_id, provider_message_id) do nothing
)
select count(*) from sent
"""


async def update_outbox_sent(
    conn: asyncpg.Connection, outbox_id: uuid.UUID, provider_message_ids: Sequence[str] = ()
) -> bool:
    """Mark a pending row sent; False if it was not pending (someone else sent it)."""
    updated: int = await conn.fetchval(UPDATE_OUTBOX_SENT, outbox_id, list(provider_message_ids))
    return updated == 1


@dataclass(frozen=True)
class DeliveryClaim:
    """What a sender needs about a claimed outbox row (None: not known)."""

    reply_to_external_id: str | None  # the provider's id of the message being answered
    last_inbound_at: datetime | None  # the customer's latest message in the conversation
    route_kind: str | None  # channels.kind of the number the reply leaves from
    route_address: str | None  # its phone_number_id / WAHA session


# The claim and its route live in skillet_claim_outbox, which the holder's
# reply commit also runs (turn.holder_queries.commit_turn).
CLAIM_OUTBOX_DELIVERY = """
select reply_to_external_id, last_inbound_at, route_kind, route_address
from skillet_claim_outbox($1)
"""


async def claim_outbox_delivery(
    conn: asyncpg.Connection, outbox_id: uuid.UUID
) -> DeliveryClaim | None:
    """Claim a pending, never-claimed row for one send when it has a route (the only kind
    that leaves the building, so the only kind a crash mid-send could deliver twice; a row
    without one is re-tried by a re-run); None if it is sent, failed or claimed."""
    row = await conn.fetchrow(CLAIM_OUTBOX_DELIVERY, outbox_id)
    return None if row is None else DeliveryClaim(**dict(row))


RELEASE_OUTBOX_CLAIM = """
update outbox set delivery_claimed_at = null where id = $1 and status = 'pending'
"""


async def release_outbox_claim(conn: asyncpg.Connection, outbox_id: uuid.UUID) -> None:
    """The sender said nothing went out and a later try may work: allow one."""
    await conn.execute(RELEASE_OUTBOX_CLAIM, outbox_id)


UPDATE_OUTBOX_FAILED = """
update outbox set status = 'failed', last_error = $2, attempts = attempts + 1
where id = $1 and status = 'pending'
"""


async def update_outbox_failed(conn: asyncpg.Connection, outbox_id: uuid.UUID, reason: str) -> bool:
    """Mark a pending row failed for good, keeping why; False if it was not pending."""
    status: str = await conn.execute(UPDATE_OUTBOX_FAILED, outbox_id, reason[:2000])
    return status.endswith(" 1")


# A claim older than any send can last (its job was cancelled, or its worker died): the
# reply may or may not have reached the customer, so it is failed, not re-sent (one narrow
# function across orgs, skillet_fail_abandoned_claims).
FAIL_ABANDONED_CLAIMS = "select id, organization_id from skillet_fail_abandoned_claims($1)"


async def fail_abandoned_claims(
    conn: asyncpg.Connection, older_than_s: float
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Mark failed every pending row claimed more than `older_than_s` ago; (id, org) of each."""
    rows = await conn.fetch(FAIL_ABANDONED_CLAIMS, older_than_s)
    return [(r["id"], r["organization_id"]) for r in rows]


INSERT_ACTIVATIONS = """
select skillet_record_activations($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[])
"""


@dataclass(frozen=True)
class ActivationRow:
    organization_id: uuid.UUID
    skill_name: str
    skill_version_id: uuid.UUID | None
    trigger: str
    job_id: str | None


async def insert_activations(conn: asyncpg.Connection, rows: Sequence[ActivationRow]) -> None:
    """One statement for a whole batch; telemetry, so it does not wait for the WAL flush."""
    async with conn.transaction():
        await set_local_async_commit(conn)
        await conn.execute(
            INSERT_ACTIVATIONS,
            [r.organization_id for r in rows],
            [r.skill_name for r in rows],
            [r.skill_version_id for r in rows],
            [r.trigger for r in rows],
            [r.job_id for r in rows],
        )


INSERT_ORGANIZATION = """
insert into organizations (id, name) values ($1, $2)
on conflict (id) do nothing
returning id
"""


async def insert_organization(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> bool:
    """Create an org; False when that id already exists (left unchanged)."""
    return await conn.fetchval(INSERT_ORGANIZATION, organization_id, name) is not None


async def insert_agent(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, system_prompt: str
) -> uuid.UUID:
    """An agent on the worker's default model; its id (see turn.agent_queries.create_agent)."""
    agent = await create_agent(conn, organization_id, name=name, system_prompt=system_prompt)
    return agent.id
