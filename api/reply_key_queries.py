"""SQL of a person's reply sent with an Idempotency-Key (person_reply_keys): forget a key
after 24 hours, claim one, read the first answer, and record it with the reply."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

KEY_TTL = "24 hours"

# The actor's keys older than a day: a key may be used again after that.
DELETE_EXPIRED_REPLY_KEYS = f"""
delete from person_reply_keys
where organization_id = $1 and actor = $2 and created_at < now() - interval '{KEY_TTL}'
"""


async def delete_expired_reply_keys(
    conn: asyncpg.Connection, organization_id: uuid.UUID, actor: str
) -> None:
    await conn.execute(DELETE_EXPIRED_REPLY_KEYS, organization_id, actor)


# A concurrent claim of the same key waits here for the other transaction (the primary key),
# then inserts nothing if it committed.
INSERT_REPLY_KEY = """
insert into person_reply_keys (organization_id, actor, idempotency_key, request_sha256,
                               conversation_id)
values ($1, $2, $3, $4, $5)
on conflict (organization_id, actor, idempotency_key) do nothing
returning true
"""


async def insert_reply_key(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    key: str,
    request_sha256: bytes,
    conversation_id: uuid.UUID,
) -> bool:
    """True: this request holds the key now (until its transaction ends)."""
    claimed = await conn.fetchval(
        INSERT_REPLY_KEY, organization_id, actor, key, request_sha256, conversation_id
    )
    return bool(claimed)


@dataclass(frozen=True)
class ReplyKey:
    request_sha256: bytes
    response: dict[str, Any] | None


LOCK_REPLY_KEY = """
select request_sha256, response from person_reply_keys
where organization_id = $1 and actor = $2 and idempotency_key = $3
for update
"""


async def lock_reply_key(
    conn: asyncpg.Connection, organization_id: uuid.UUID, actor: str, key: str
) -> ReplyKey | None:
    row = await conn.fetchrow(LOCK_REPLY_KEY, organization_id, actor, key)
    return None if row is None else ReplyKey(bytes(row["request_sha256"]), row["response"])


UPDATE_REPLY_KEY_ANSWER = """
update person_reply_keys set response = $4, message_id = $5
where organization_id = $1 and actor = $2 and idempotency_key = $3
"""


async def update_reply_key_answer(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    key: str,
    response: dict[str, Any],
    message_id: uuid.UUID,
) -> None:
    await conn.execute(UPDATE_REPLY_KEY_ANSWER, organization_id, actor, key, response, message_id)
