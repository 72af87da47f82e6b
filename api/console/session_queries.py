"""SQL of console sessions: the pre-org lookup (a security-definer function), create, end.
A session speaks for an API key or for a person (api.people).

The lookup joins the session to its key every time, so a revoked key's session answers no
row on its very next request. Everything but the lookup runs bound to the session's org.
"""

from __future__ import annotations

import uuid

import asyncpg

from api.keys import Role
from api.routing import Principal

LOOKUP_SESSION = (
    "select organization_id, role, key_id, prefix, person_id, person_name"
    " from skillet_console_session_lookup($1)"
)


async def fetch_session_principal(
    conn: asyncpg.Connection, session_hash: bytes
) -> Principal | None:
    """Who a live session (of a live key) speaks for; None for anything else."""
    row = await conn.fetchrow(LOOKUP_SESSION, session_hash)
    if row is None:
        return None
    return Principal(
        row["organization_id"],
        Role(row["role"]),
        row["key_id"],
        row["prefix"],
        person_id=row["person_id"],
        name=row["person_name"],
    )


# Expiry by the database's clock, the one the lookup compares with.
INSERT_SESSION = """
insert into console_sessions (session_hash, organization_id, key_id, person_id, expires_at)
values ($1, $2, $3, $4, now() + make_interval(secs => $5))
"""


async def insert_session(
    conn: asyncpg.Connection, session_hash: bytes, principal: Principal, ttl_s: int
) -> None:
    await conn.execute(
        INSERT_SESSION,
        session_hash,
        principal.organization_id,
        None if principal.person_id is not None else principal.key_id,
        principal.person_id,
        float(ttl_s),
    )


DELETE_SESSION = "delete from console_sessions where organization_id = $1 and session_hash = $2"


async def delete_session(
    conn: asyncpg.Connection, organization_id: uuid.UUID, session_hash: bytes
) -> None:
    await conn.execute(DELETE_SESSION, organization_id, session_hash)


DELETE_EXPIRED_SESSIONS = (
    "delete from console_sessions where organization_id = $1 and expires_at <= now()"
)


async def delete_expired_sessions(conn: asyncpg.Connection, organization_id: uuid.UUID) -> int:
    """Sign-in sweeps its org's expired sessions (the lookup ignores them anyway)."""
    status = await conn.execute(DELETE_EXPIRED_SESSIONS, organization_id)
    return int(status.split()[-1])
