"""A person's reply sent with an `Idempotency-Key` header: sent once, answered the same.

The key (1 to 255 visible ASCII characters, else 422 `idempotency_key_invalid`) is scoped to
the org and the actor (the API key's prefix) and kept in Postgres with the reply, in the
reply's own transaction (person_reply_keys), so a Redis wipe forgets nothing and a rolled
back reply leaves no key. Within 24 hours the same key answers the first reply's 202 JSON and
sends nothing; with another request (conversation or body) it is 422
`idempotency_key_reused`. Two requests with one key at once: the second waits on the key's
primary key for the first's transaction, then answers what it answered.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from api.errors import invalid
from api.reply_key_queries import (
    delete_expired_reply_keys,
    insert_reply_key,
    lock_reply_key,
    update_reply_key_answer,
)

HEADER = "Idempotency-Key"
_VALID = re.compile(r"[!-~]{1,255}")


@dataclass(frozen=True)
class ReplyKeyClaim:
    organization_id: uuid.UUID
    actor: str
    key: str
    request_sha256: bytes
    conversation_id: uuid.UUID


def idempotency_key(header: str | None) -> str | None:
    """The header's key (None when absent); 422 idempotency_key_invalid when malformed."""
    if header is None:
        return None
    if not _VALID.fullmatch(header):
        raise invalid(
            "idempotency_key_invalid",
            f"O cabeçalho {HEADER} deve ter de 1 a 255 caracteres ASCII visíveis (sem espaços).",
        )
    return header


def request_sha256(conversation_id: uuid.UUID, body_json: str) -> bytes:
    """What a key stands for: the conversation and the request's body (as parsed)."""
    return hashlib.sha256(f"{conversation_id}\n{body_json}".encode()).digest()


async def claim(conn: asyncpg.Connection, wanted: ReplyKeyClaim) -> dict[str, Any] | None:
    """Inside the reply's transaction: None when this request is the key's first (it holds
    the key until the transaction ends), else the first reply's answer."""
    org, actor, key = wanted.organization_id, wanted.actor, wanted.key
    await delete_expired_reply_keys(conn, org, actor)
    for _ in range(2):  # a first that rolled back, or expired, leaves the key free again
        if await insert_reply_key(
            conn, org, actor, key, wanted.request_sha256, wanted.conversation_id
        ):
            return None
        first = await lock_reply_key(conn, org, actor, key)
        if first is None:
            continue
        if first.request_sha256 != wanted.request_sha256:
            raise invalid(
                "idempotency_key_reused",
                f"Este {HEADER} já foi usado nas últimas 24 horas para outra resposta: use "
                "uma chave nova para cada resposta diferente.",
            )
        if first.response is not None:
            return first.response
    raise invalid(  # never: a committed key always carries its answer
        "idempotency_key_reused", f"Este {HEADER} está em uso; tente de novo."
    )


async def record(
    conn: asyncpg.Connection, wanted: ReplyKeyClaim, answer: dict[str, Any], message_id: uuid.UUID
) -> None:
    """The reply's answer, on the key it holds (same transaction as the reply)."""
    await update_reply_key_answer(
        conn, wanted.organization_id, wanted.actor, wanted.key, answer, message_id
    )
