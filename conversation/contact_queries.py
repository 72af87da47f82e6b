"""SQL of the customer a turn answers: their WhatsApp profile name (skillet_contact_name,
which binds the org itself, so it runs on a core.tenancy.self_bound_connection)."""

from __future__ import annotations

import uuid

import asyncpg

from core.tenancy import org_proof

FETCH_CONTACT_NAME = "select skillet_contact_name($1, $2, $3)"


async def fetch_contact_name(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> str | None:
    """The profile name the webhook last stored for the conversation's customer, or None."""
    name: str | None = await conn.fetchval(
        FETCH_CONTACT_NAME, organization_id, org_proof(conn, organization_id), conversation_id
    )
    return name
