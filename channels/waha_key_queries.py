"""SQL of per-channel WAHA webhook keys (table channel_waha_keys).

The webhook never reads a key: it asks `skillet_waha_signature_valid(session, body,
signature)` whether an event's signature holds under its session's key.
Only the owner reads keys (`skillet_waha_channel_key`) and writes them (the CLI). A key never
leaves these functions in a repr, a log line or a CLI answer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import asyncpg

from channels.models import Channel
from core.channel_kind import ChannelKind

MIN_KEY_CHARS = 16  # same bounds as the table's check constraint
MAX_KEY_CHARS = 512


@dataclass(frozen=True)
class WahaChannelKey:
    """What the webhook learns of a WAHA session before it checks the event's signature."""

    organization_id: uuid.UUID
    hmac_key: str | None = field(repr=False)  # None: no key of its own (use the global one)


FETCH_WAHA_CHANNEL_KEY = "select organization_id, hmac_key from skillet_waha_channel_key($1)"


async def fetch_waha_channel_key(conn: asyncpg.Connection, session: str) -> WahaChannelKey | None:
    """The session's org and own key; None when no WAHA channel has that session."""
    row = await conn.fetchrow(FETCH_WAHA_CHANNEL_KEY, session)
    return None if row is None else WahaChannelKey(row["organization_id"], row["hmac_key"])


FETCH_WAHA_SIGNATURE_VALID = "select skillet_waha_signature_valid($1, $2, $3)"


async def fetch_waha_signature_valid(
    conn: asyncpg.Connection, session: str, body: bytes, signature: str
) -> bool | None:
    """Whether `signature` (hex, lower case) is HMAC-SHA512 of `body` under the key of the
    session's channel; None when that channel has no key of its own, or no channel has it."""
    valid: bool | None = await conn.fetchval(FETCH_WAHA_SIGNATURE_VALID, session, body, signature)
    return valid


UPSERT_WAHA_CHANNEL_KEY = """
insert into channel_waha_keys (channel_id, organization_id, hmac_key)
values ($1, $2, $3)
on conflict (channel_id) do update set hmac_key = excluded.hmac_key, updated_at = now()
"""


async def upsert_waha_channel_key(conn: asyncpg.Connection, channel: Channel, key: str) -> None:
    """Give a WAHA channel its own key (replacing the one it had)."""
    if channel.kind is not ChannelKind.WAHA:
        raise ValueError(f"only WAHA channels have webhook keys, not {channel.kind.value}")
    await conn.execute(UPSERT_WAHA_CHANNEL_KEY, channel.id, channel.organization_id, key)


DELETE_WAHA_CHANNEL_KEY = "delete from channel_waha_keys where channel_id = $1 returning 1"


async def delete_waha_channel_key(conn: asyncpg.Connection, channel_id: uuid.UUID) -> bool:
    """Drop a channel's own key (it falls back to the global one); False if it had none."""
    return await conn.fetchval(DELETE_WAHA_CHANNEL_KEY, channel_id) is not None


FETCH_HAS_WAHA_CHANNEL_KEY = "select exists (select 1 from channel_waha_keys where channel_id = $1)"


async def fetch_has_waha_channel_key(conn: asyncpg.Connection, channel_id: uuid.UUID) -> bool:
    return bool(await conn.fetchval(FETCH_HAS_WAHA_CHANNEL_KEY, channel_id))
