"""Storing an inbound message before any job exists: one pooled connection, one statement.

Postgres is where a message is received: its row (with its conversation) is written once,
idempotently on org, channel and provider id, and a redelivery finds the stored row and what
became of it. The job that follows names the conversation only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import asyncpg

from core.tenancy import self_bound_connection
from inbox.echo_queries import ReceivedEcho, receive_echo
from inbox.errors import UnknownOrganization
from inbox.message import InboundMessage, InboundText
from inbox.queries import PersistedInbound, ReceivedInbound, receive_inbound, upsert_inbound


async def store_inbound(
    pool: Any, message: InboundMessage, *, received_at: datetime
) -> PersistedInbound:
    """Store a message of a named org (skillet_store_inbound binds it); an org that does
    not exist raises UnknownOrganization."""
    async with self_bound_connection(pool) as conn:
        try:
            return await upsert_inbound(conn, message, received_at=received_at)
        except asyncpg.ForeignKeyViolationError as exc:
            raise UnknownOrganization(
                f"organization {message.organization_id} does not exist"
            ) from exc


async def store_received(
    pool: Any,
    text: InboundText,
    *,
    body: str,
    received_at: datetime,
    always_answered: bool,
    answerable: bool,
) -> ReceivedInbound | None:
    """Store a webhook message in the org of the number it reached (None: no org connected
    that number); see inbox.queries.receive_inbound for the arguments."""
    async with self_bound_connection(pool) as conn:
        return await receive_inbound(
            conn,
            text,
            body=body,
            received_at=received_at,
            always_answered=always_answered,
            answerable=answerable,
        )


async def store_echo(
    pool: Any, echo: InboundText, *, body: str, received_at: datetime
) -> ReceivedEcho | None:
    """Store an echo of a message the business's number sent, in that number's org, pending
    (None: no org connected that number); see inbox.echo_queries.receive_echo."""
    async with self_bound_connection(pool) as conn:
        return await receive_echo(conn, echo, body=body, received_at=received_at)
