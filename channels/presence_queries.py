"""SQL of read marks: which messages a read names (once each), and the number they came to."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from channels.credential_queries import SendCredentials
from channels.models import ChannelStatus
from delivery.contract import Route


@dataclass(frozen=True)
class PresenceTarget:
    """The number a customer's message came to, its credentials and the customer."""

    route: Route
    credentials: SendCredentials
    contact_id: str


# On a connection bound to the org: the message's number (inbound_routes), its own secrets,
# the conversation's customer; with $4, the read claimed (skillet_claim_read: read_at set on
# the messages up to this one, once each, so a person opening the conversation later does
# not mark them again).
FETCH_PRESENCE_TARGET = """
select c.kind, c.address, c.status, c.waha_base_url, s.access_token, s.waha_api_key,
       c.waha_server_vouched, v.contact_id,
       case when $4 then skillet_claim_read($1, $2, (
           select m.id from messages m
           where m.organization_id = $1 and m.channel = 'whatsapp' and m.external_id = $3
             and m.direction = 'inbound')) end as claimed
from inbound_routes ir
join channels c on c.id = ir.channel_id
join conversations v on v.id = $2
left join lateral skillet_channel_secrets(c.kind, c.address) s on true
where ir.organization_id = $1 and ir.external_id = $3
"""


async def fetch_presence_target(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    external_id: str,
    *,
    claim_read: bool,
) -> PresenceTarget | None:
    """None: the message came through no connected number (e.g. `skillet enqueue`)."""
    row = await conn.fetchrow(
        FETCH_PRESENCE_TARGET, organization_id, conversation_id, external_id, claim_read
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
