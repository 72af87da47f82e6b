"""SQL of read marks: which messages a read names (once each), and the number they came to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from channels.credential_queries import SendCredentials
from channels.models import ChannelStatus
from core.tenancy import org_proof
from delivery.contract import Route


@dataclass(frozen=True)
class PresenceTarget:
    """The number a customer's message came to, its credentials and the customer."""

    route: Route
    credentials: SendCredentials
    contact_id: str


# One statement that binds the org itself (skillet_presence_target): run on a
# core.tenancy.self_bound_connection, no bind or reset around it.
FETCH_PRESENCE_TARGET = """
select kind, address, status, waha_base_url, access_token, waha_api_key, waha_server_vouched,
       contact_id
from skillet_presence_target($1, $2, $3, $4, $5)
"""


async def fetch_presence_target(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    external_id: str,
    *,
    claim_read: bool,
) -> PresenceTarget | None:
    """None: the message came through no connected number (e.g. `skillet enqueue`). With
    `claim_read`, the read of the messages up to it is claimed (once each)."""
    row = await conn.fetchrow(
        FETCH_PRESENCE_TARGET,
        organization_id,
        org_proof(conn, organization_id),
        conversation_id,
        external_id,
        claim_read,
    )
    if row is None:
        return None
    credentials = SendCredentials(
        ChannelStatus(row["status"]),
        row["waha_base_url"],
        row["access_token"],
        row["waha_api_key"],
        row["waha_server_vouched"],
    )
    return PresenceTarget(Route(row["kind"], row["address"]), credentials, row["contact_id"])


CLAIM_READ = "select skillet_claim_read($1, $2, null)"


async def claim_unread(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> str | None:
    """Claim the conversation's customer messages not yet marked read: the latest one's
    external id (None: nothing new)."""
    found = await conn.fetchval(CLAIM_READ, organization_id, conversation_id)
    return found if isinstance(found, str) else None
