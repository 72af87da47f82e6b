"""SQL of read marks: which message a person's read names (once each), and the number it came to."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import asyncpg

from channels.credential_queries import SendCredentials
from channels.models import ChannelStatus
from core.tenancy import org_proof
from delivery.contract import Route


@dataclass(frozen=True)
class ReadNumber:
    """The number a customer's message came to, with its credentials: what its read mark and
    the typing indicator are sent with."""

    route: Route
    credentials: SendCredentials


@dataclass(frozen=True)
class PresenceTarget:
    """A read mark's number and the customer it goes to."""

    number: ReadNumber
    contact_id: str

    @property
    def route(self) -> Route:
        return self.number.route

    @property
    def credentials(self) -> SendCredentials:
        return self.number.credentials


def read_number(row: Mapping[str, Any]) -> ReadNumber | None:
    """The number in a row of skillet_read_target's columns (`route_kind`, `route_address`,
    `channel_status`, `waha_base_url`, `access_token`, `waha_api_key`, `waha_server_vouched`:
    the take's and the continue's); None: no connected number."""
    if row["route_kind"] is None:
        return None
    credentials = SendCredentials(
        ChannelStatus(row["channel_status"]),
        row["waha_base_url"],
        row["access_token"],
        row["waha_api_key"],
        row["waha_server_vouched"],
    )
    return ReadNumber(Route(row["route_kind"], row["route_address"]), credentials)


# One statement that binds the org itself (skillet_presence_target).
FETCH_PRESENCE_TARGET = """
select kind as route_kind, address as route_address, status as channel_status, waha_base_url,
       access_token, waha_api_key, waha_server_vouched, contact_id
from skillet_presence_target($1, $2, $3, $4)
"""


async def fetch_presence_target(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    external_id: str,
) -> PresenceTarget | None:
    """None: the message came through no connected number (e.g. `skillet enqueue`)."""
    row = await conn.fetchrow(
        FETCH_PRESENCE_TARGET,
        organization_id,
        org_proof(conn, organization_id),
        conversation_id,
        external_id,
    )
    number = None if row is None else read_number(row)
    return None if number is None else PresenceTarget(number, row["contact_id"])


CLAIM_READ = "select skillet_claim_read($1, $2)"


async def claim_unread(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> str | None:
    """Claim the conversation's customer messages not yet marked read: the latest one's
    external id (None: nothing new)."""
    found = await conn.fetchval(CLAIM_READ, organization_id, conversation_id)
    return found if isinstance(found, str) else None
