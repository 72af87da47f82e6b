"""SQL of a message's media: what waits to be fetched, and what became of it.

Read only for a burst that holds a media message (conversation.media.burst): a text-only turn
runs none of these.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from conversation.queries import InboundRow

# The message's media with the route it came by and that number's own secrets (RLS and
# skillet_channel_secrets show the bound org's only).
LIST_MEDIA_TO_READ = """
select m.id, m.kind, m.media, m.media_state, m.media_attempts, m.media_refusal,
       ch.kind as route_kind, ch.waha_base_url, ch.waha_server_vouched, s.access_token,
       s.waha_api_key,
       coalesce((select a.vision from agents a where a.id = $2), false) as vision
from messages m
left join inbound_routes r
       on r.organization_id = m.organization_id and r.external_id = m.external_id
left join channels ch on ch.id = r.channel_id
left join lateral skillet_channel_secrets(ch.kind, ch.address) s on ch.id is not null
where m.id = any($1::uuid[]) and m.media_state in ('pending', 'refused')
"""


@dataclass(frozen=True)
class MediaRow:
    message_id: uuid.UUID
    kind: str
    media: dict[str, Any]
    state: str
    attempts: int
    refusal: str | None
    route_kind: str | None
    waha_base_url: str | None
    access_token: str | None = field(default=None, repr=False)
    waha_api_key: str | None = field(default=None, repr=False)
    vision: bool = False  # the answering agent's model takes images
    waha_server_vouched: bool = False  # an operator gave waha_base_url (else checked each fetch)


async def list_media_to_read(
    conn: asyncpg.Connection, message_ids: Sequence[uuid.UUID], agent_id: uuid.UUID | None
) -> dict[uuid.UUID, MediaRow]:
    """The burst's messages with media still to read (or refused), keyed by message id;
    `agent_id`: the burst's answering agent (whether its model takes images)."""
    rows = await conn.fetch(LIST_MEDIA_TO_READ, list(message_ids), agent_id)
    return {
        r["id"]: MediaRow(
            r["id"],
            r["kind"],
            r["media"] or {},
            r["media_state"],
            r["media_attempts"],
            r["media_refusal"],
            r["route_kind"],
            r["waha_base_url"],
            r["access_token"],
            r["waha_api_key"],
            r["vision"],
            bool(r["waha_server_vouched"]),
        )
        for r in rows
    }


UPDATE_MEDIA_READ = """
update messages set media_state = $2, media_key = $3, media_type = $4, media_bytes = $5,
    media_stored_at = now(), body = coalesce($6, body)
where id = $1 and media_state = 'pending'
"""


async def update_media_read(
    conn: asyncpg.Connection,
    message_id: uuid.UUID,
    *,
    state: str,
    key: str,
    media_type: str,
    size_bytes: int,
    body: str | None,
) -> None:
    """Stored (and with `body`, transcribed: the transcript is the message's text now)."""
    await conn.execute(UPDATE_MEDIA_READ, message_id, state, key, media_type, size_bytes, body)


UPDATE_MEDIA_BODY = "update messages set body = $2 where id = $1 and answered_by is null"


async def update_media_body(conn: asyncpg.Connection, message_id: uuid.UUID, body: str) -> None:
    """A stored document's description with its size (still unanswered: not rewritten after)."""
    await conn.execute(UPDATE_MEDIA_BODY, message_id, body)


UPDATE_MEDIA_REFUSED = """
update messages set media_state = 'refused', media_refusal = $2,
    media_key = coalesce($3, media_key), media_type = coalesce($4, media_type),
    media_stored_at = case when $3::text is null then media_stored_at else now() end
where id = $1 and media_state = 'pending'
"""


async def update_media_refused(
    conn: asyncpg.Connection,
    message_id: uuid.UUID,
    code: str,
    *,
    key: str | None = None,
    media_type: str | None = None,
) -> None:
    await conn.execute(UPDATE_MEDIA_REFUSED, message_id, code, key, media_type)


BUMP_MEDIA_ATTEMPTS = """
update messages set media_attempts = media_attempts + 1 where id = $1
returning media_attempts
"""


async def bump_media_attempts(conn: asyncpg.Connection, message_id: uuid.UUID) -> int:
    return int(await conn.fetchval(BUMP_MEDIA_ATTEMPTS, message_id) or 0)


FETCH_STORED_MEDIA = """
select media_key, media_type, media->>'file_name' as file_name from messages
where organization_id = $1 and conversation_id = $2 and id = $3 and media_key is not null
"""


async def fetch_stored_media(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    message_id: uuid.UUID,
) -> tuple[str, str, str] | None:
    """(key, sniffed type, safe file name) of a message's stored media; None: none stored."""
    row = await conn.fetchrow(FETCH_STORED_MEDIA, organization_id, conversation_id, message_id)
    if row is None:
        return None
    return row["media_key"], row["media_type"] or "", row["file_name"] or "arquivo"


# A message whose media waits while a person holds its conversation (the agent reads nothing).
FETCH_HELD_MEDIA = """
select m.id, m.external_id, m.body, m.received_at, m.answered_by
from messages m join conversations c on c.id = m.conversation_id
where m.id = $1 and m.direction = 'inbound' and m.media_state = 'pending'
  and c.mode in ('waiting', 'human')
"""


async def fetch_held_media(conn: asyncpg.Connection, message_id: uuid.UUID) -> InboundRow | None:
    """The message, when its media is still to read and a person holds (or is asked for)
    its conversation; None otherwise (the agent's holder reads it in its burst)."""
    row = await conn.fetchrow(FETCH_HELD_MEDIA, message_id)
    if row is None:
        return None
    return InboundRow(
        row["id"], row["external_id"], row["body"], row["received_at"], row["answered_by"]
    )
