"""SQL of a number's own credentials: its WABA id and WAHA server (channels), its access token
and WAHA API key (channel_secrets), and its `needs_token` status.

The secrets are read only through `skillet_channel_secrets` (one number of the bound org: the
worker's send path, the API's verification) and written by the API through
`skillet_store_channel_secrets`, by the owner (the CLI) directly. A secret never leaves these
functions in a repr, a log line or an answer: listings show `channels.*_last4` only.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import asyncpg

from channels.models import Channel, ChannelStatus, last4
from channels.queries import CHANNEL_COLUMNS, UNCHANGED, Unchanged, channel_from_row
from core.channel_kind import ChannelKind

MIN_TOKEN_CHARS = 16  # same bounds as channel_secrets' check constraints
MAX_TOKEN_CHARS = 4096
MAX_WAHA_KEY_CHARS = 512


@dataclass(frozen=True)
class ChannelSecrets:
    """A number's own secrets (None: it has none of its own, the global setting applies)."""

    access_token: str | None = field(default=None, repr=False)
    waha_api_key: str | None = field(default=None, repr=False)


NO_SECRETS = ChannelSecrets()

FETCH_CHANNEL_SECRETS = "select access_token, waha_api_key from skillet_channel_secrets($1, $2)"


async def fetch_channel_secrets(
    conn: asyncpg.Connection, kind: ChannelKind | str, address: str
) -> ChannelSecrets:
    """The number's own secrets, on a connection bound to its org (NO_SECRETS: none, or the
    number is not that org's)."""
    row = await conn.fetchrow(FETCH_CHANNEL_SECRETS, str(kind), address)
    return NO_SECRETS if row is None else ChannelSecrets(row["access_token"], row["waha_api_key"])


STORE_CHANNEL_SECRETS = "select skillet_store_channel_secrets($1, $2, $3)"


async def store_channel_secrets(
    conn: asyncpg.Connection,
    channel_id: uuid.UUID,
    *,
    access_token: str | None = None,
    waha_api_key: str | None = None,
) -> bool:
    """The API's write (bound to the channel's org; None keeps what is stored); False when
    the channel is not the bound org's."""
    return bool(await conn.fetchval(STORE_CHANNEL_SECRETS, channel_id, access_token, waha_api_key))


UPSERT_CHANNEL_SECRETS = """
insert into channel_secrets as s (channel_id, organization_id, access_token, waha_api_key)
values ($1, $2, $3, $4)
on conflict (channel_id) do update set
    access_token = coalesce(excluded.access_token, s.access_token),
    waha_api_key = coalesce(excluded.waha_api_key, s.waha_api_key),
    updated_at = now()
"""


async def upsert_channel_secrets_as_owner(
    conn: asyncpg.Connection,
    channel: Channel,
    *,
    access_token: str | None = None,
    waha_api_key: str | None = None,
) -> None:
    """The owner's (the CLI's) write of the same: across orgs, no binding needed."""
    await conn.execute(
        UPSERT_CHANNEL_SECRETS, channel.id, channel.organization_id, access_token, waha_api_key
    )


# $3/$5 say whether to change waba_id/waha_base_url; null last4s keep what is stored.
UPDATE_CHANNEL_CREDENTIALS = f"""
update channels set
    waba_id = case when $3 then $2 else waba_id end,
    waha_base_url = case when $5 then $4 else waha_base_url end,
    waha_server_vouched = case when $5 then $9 else waha_server_vouched end,
    access_token_last4 = coalesce($6, access_token_last4),
    waha_api_key_last4 = coalesce($7, waha_api_key_last4),
    status = coalesce($8, status)
where id = $1
returning {CHANNEL_COLUMNS}
"""


async def update_channel_credentials(
    conn: asyncpg.Connection,
    channel_id: uuid.UUID,
    *,
    waba_id: str | Unchanged | None = UNCHANGED,
    waha_base_url: str | Unchanged | None = UNCHANGED,
    access_token: str | None = None,
    waha_api_key: str | None = None,
    waha_server_vouched: bool = False,
) -> Channel | None:
    """Record on the channel's row what may be shown of new credentials (a new token puts a
    `needs_token` channel back to active); the secrets themselves are stored apart. A new
    `waha_base_url` is vouched for only by an operator (`waha_server_vouched`); else it is
    resolved and checked at every call to it."""
    row = await conn.fetchrow(
        UPDATE_CHANNEL_CREDENTIALS,
        channel_id,
        None if isinstance(waba_id, Unchanged) else waba_id,
        not isinstance(waba_id, Unchanged),
        None if isinstance(waha_base_url, Unchanged) else waha_base_url,
        not isinstance(waha_base_url, Unchanged),
        None if access_token is None else last4(access_token),
        None if waha_api_key is None else last4(waha_api_key),
        None if access_token is None else ChannelStatus.ACTIVE.value,
        waha_server_vouched,
    )
    return None if row is None else channel_from_row(row)


MARK_NEEDS_TOKEN = """
update channels set status = 'needs_token'
where kind = $1 and address = $2 and status <> 'needs_token'
returning id
"""


async def mark_needs_token(conn: asyncpg.Connection, kind: str, address: str) -> bool:
    """Meta refused the number's token: its sends wait for a new one. True if this call
    changed it (the first send to learn it)."""
    return await conn.fetchval(MARK_NEEDS_TOKEN, kind, address) is not None


FETCH_CHANNEL_STATUS = "select status from channels where kind = $1 and address = $2"


async def fetch_channel_status(
    conn: asyncpg.Connection, kind: str, address: str
) -> ChannelStatus | None:
    found = await conn.fetchval(FETCH_CHANNEL_STATUS, kind, address)
    return None if found is None else ChannelStatus(found)


# The org's conversations with a reply that waits for a channel (pending, never claimed): a
# new token wakes them, and the holder delivers what waits (conversation.holder).
LIST_WAITING_CONVERSATIONS = """
select distinct conversation_id from outbox
where organization_id = $1 and status = 'pending' and delivery_claimed_at is null
limit $2
"""


async def list_waiting_conversations(
    conn: asyncpg.Connection, organization_id: uuid.UUID, limit: int = 1000
) -> list[uuid.UUID]:
    rows = await conn.fetch(LIST_WAITING_CONVERSATIONS, organization_id, limit)
    return [r["conversation_id"] for r in rows]


FAIL_PARKED_OUTSIDE_WINDOW = (
    "select id, organization_id from skillet_fail_parked_outside_window($1)"
)


async def fail_parked_outside_window(
    conn: asyncpg.Connection, window_s: float
) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Fail the replies that waited for a new token past their customer-service window."""
    rows = await conn.fetch(FAIL_PARKED_OUTSIDE_WINDOW, window_s)
    return [(r["id"], r["organization_id"]) for r in rows]


@dataclass(frozen=True)
class SendCredentials:
    """What the send path needs of a number: its status, own server and own secrets (None:
    the global settings apply)."""

    status: ChannelStatus = ChannelStatus.ACTIVE
    waha_base_url: str | None = None
    access_token: str | None = field(default=None, repr=False)
    waha_api_key: str | None = field(default=None, repr=False)
    # An operator gave `waha_base_url` (CLI): used as given. Else an org's admin did (API):
    # resolved, every address checked public, at every call.
    waha_server_vouched: bool = False


NO_SEND_CREDENTIALS = SendCredentials()

# On a connection bound to the number's org: RLS shows that org's channel only, and the
# function its secrets only.
FETCH_SEND_CREDENTIALS = """
select c.status, c.waha_base_url, s.access_token, s.waha_api_key, c.waha_server_vouched
from channels c
left join lateral skillet_channel_secrets(c.kind, c.address) s on true
where c.kind = $1 and c.address = $2
"""


async def fetch_send_credentials(
    conn: asyncpg.Connection, kind: str, address: str
) -> SendCredentials | None:
    """None when the bound org has no such number."""
    row = await conn.fetchrow(FETCH_SEND_CREDENTIALS, kind, address)
    if row is None:
        return None
    return SendCredentials(
        ChannelStatus(row["status"]),
        row["waha_base_url"],
        row["access_token"],
        row["waha_api_key"],
        row["waha_server_vouched"],
    )
