"""SQL of channels: the channels table, inbound routes and contact aliases."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from channels.models import Channel, ChannelStatus
from core.channel_kind import ChannelKind


class Unchanged:
    """A field `update_channel` leaves as it is (None means "clear" for the agent)."""


UNCHANGED = Unchanged()

# What skillet_channel_by_address (the webhook's lookup) returns.
_ROUTE_COLUMNS = (
    "id, organization_id, agent_id, kind, address, display_phone, created_at, reply_to_non_text"
)
CHANNEL_COLUMNS = (
    f"{_ROUTE_COLUMNS}, waba_id, waha_base_url, status, access_token_last4, waha_api_key_last4"
)


def channel_from_row(row: asyncpg.Record) -> Channel:
    values = dict(row)
    values["kind"] = ChannelKind(values["kind"])
    if "status" in values:
        values["status"] = ChannelStatus(values["status"])
    return Channel(**values)


INSERT_CHANNEL = f"""
insert into channels (organization_id, agent_id, kind, address, display_phone, reply_to_non_text,
                      waba_id, waha_base_url, waha_server_vouched)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
on conflict (kind, address) do nothing
returning {CHANNEL_COLUMNS}
"""


async def insert_channel(
    conn: asyncpg.Connection,
    *,
    organization_id: uuid.UUID,
    agent_id: uuid.UUID | None,
    kind: ChannelKind,
    address: str,
    display_phone: str | None,
    reply_to_non_text: bool = False,
    waba_id: str | None = None,
    waha_base_url: str | None = None,
    waha_server_vouched: bool = False,
) -> Channel | None:
    """A new channel; None when that number (kind + address) is already connected.
    `waha_server_vouched`: an operator gave `waha_base_url` (else it is checked at each call)."""
    row = await conn.fetchrow(
        INSERT_CHANNEL,
        organization_id,
        agent_id,
        kind.value,
        address,
        display_phone,
        reply_to_non_text,
        waba_id,
        waha_base_url,
        waha_server_vouched and waha_base_url is not None,
    )
    return None if row is None else channel_from_row(row)


# $4/$6 say whether to change agent_id/reply_to_non_text at all ($3 null clears the agent).
UPDATE_CHANNEL = f"""
update channels set
    agent_id = case when $4 then $3::uuid else agent_id end,
    reply_to_non_text = case when $6 then $5 else reply_to_non_text end
where kind = $1 and address = $2
returning {CHANNEL_COLUMNS}
"""


async def update_channel(
    conn: asyncpg.Connection,
    kind: ChannelKind,
    address: str,
    *,
    agent_id: uuid.UUID | Unchanged | None = UNCHANGED,
    reply_to_non_text: bool | Unchanged = UNCHANGED,
) -> Channel | None:
    """Change who answers a number, or whether it answers non-text; None if not connected."""
    row = await conn.fetchrow(
        UPDATE_CHANNEL,
        kind.value,
        address,
        None if isinstance(agent_id, Unchanged) else agent_id,
        not isinstance(agent_id, Unchanged),
        None if isinstance(reply_to_non_text, Unchanged) else reply_to_non_text,
        not isinstance(reply_to_non_text, Unchanged),
    )
    return None if row is None else channel_from_row(row)


FETCH_CHANNEL_BY_ADDRESS = (
    f"select {CHANNEL_COLUMNS} from channels where kind = $1 and address = $2"
)


async def fetch_channel_by_address(
    conn: asyncpg.Connection, kind: ChannelKind, address: str
) -> Channel | None:
    """The channel of a number, among those the connection may see (None: not connected)."""
    row = await conn.fetchrow(FETCH_CHANNEL_BY_ADDRESS, kind.value, address)
    return None if row is None else channel_from_row(row)


# Before an event's org is known: a narrow function across orgs (skillet_channel_by_address).
FETCH_CHANNEL_ROUTE = f"select {_ROUTE_COLUMNS} from skillet_channel_by_address($1, $2)"


async def fetch_channel_route(
    conn: asyncpg.Connection, kind: ChannelKind, address: str
) -> Channel | None:
    """The channel a webhook event's receiving number belongs to, whichever org's (None: not
    connected)."""
    row = await conn.fetchrow(FETCH_CHANNEL_ROUTE, kind.value, address)
    return None if row is None else channel_from_row(row)


LIST_CHANNELS = f"""
select {CHANNEL_COLUMNS} from channels
where $1::uuid is null or organization_id = $1
order by organization_id, created_at, id
"""


async def list_channels(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None = None
) -> list[Channel]:
    return [channel_from_row(r) for r in await conn.fetch(LIST_CHANNELS, organization_id)]


DELETE_CHANNEL = (
    f"delete from channels where kind = $1 and address = $2 returning {CHANNEL_COLUMNS}"
)


async def delete_channel(
    conn: asyncpg.Connection, kind: ChannelKind, address: str
) -> Channel | None:
    """Disconnect a number (its inbound routes go with it); None if it was not connected."""
    row = await conn.fetchrow(DELETE_CHANNEL, kind.value, address)
    return None if row is None else channel_from_row(row)


LIST_ALIAS_CONTACT_IDS = """
select contact_id from contact_aliases
where organization_id = $1 and alias = any($2::text[])
order by created_at, alias
"""


async def list_alias_contact_ids(
    conn: asyncpg.Connection, organization_id: uuid.UUID, aliases: Sequence[str]
) -> list[str]:
    """Contact ids already mapped to any of `aliases`, oldest mapping first."""
    rows = await conn.fetch(LIST_ALIAS_CONTACT_IDS, organization_id, list(aliases))
    return [r["contact_id"] for r in rows]


# Provider statuses of sent replies, one statement per org and delivery; of several for one
# message id the highest counts (an update matching a row twice would apply either). A
# status for a message that is not one of ours (sent from the phone itself) matches no
# receipt and changes nothing.
UPDATE_RECEIPTS = """
update outbox_receipts r set
    status = s.status,
    error = coalesce(s.error, r.error),
    updated_at = now()
from (
    select distinct on (provider_message_id) provider_message_id, status, error
    from unnest($2::text[], $3::text[], $4::text[]) as u(provider_message_id, status, error)
    order by provider_message_id, skillet_receipt_rank(status) desc
) s
where r.organization_id = $1 and r.provider_message_id = s.provider_message_id
  and skillet_receipt_rank(r.status) < skillet_receipt_rank(s.status)
returning r.provider_message_id, r.status
"""


async def update_receipts(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    statuses: Sequence[tuple[str, str, str | None]],
) -> dict[str, str]:
    """Apply (provider message id, status, error) updates; the receipts that moved, by
    provider message id, with their new status."""
    rows = await conn.fetch(
        UPDATE_RECEIPTS,
        organization_id,
        [s[0] for s in statuses],
        [s[1] for s in statuses],
        [s[2] for s in statuses],
    )
    return {r["provider_message_id"]: r["status"] for r in rows}
