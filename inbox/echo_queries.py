"""SQL of echoes: a message the business's own number sent, coming back through the webhook.

Stored by the webhook in one statement (`skillet_receive_echo`, SECURITY DEFINER: the org
comes from the channel), pending; settled by the worker after a grace in one statement
(`skillet_settle_echo`, binding its org with the org's proof): one of our sends, or the
phone's message, which takes the conversation (author 'phone', mode 'human').
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import asyncpg

from core.tenancy import org_proof
from inbox.message import InboundText


@dataclass(frozen=True)
class ReceivedEcho:
    organization_id: uuid.UUID
    echo_id: uuid.UUID
    created: bool  # False: stored before (a redelivery)
    pending: bool  # not settled yet: its job is (re-)enqueued


RECEIVE_ECHO = """
select organization_id, echo_id, created, pending
from skillet_receive_echo($1, $2, $3, $4, $5, $6, $7, $8, $9)
"""


async def receive_echo(
    conn: asyncpg.Connection, echo: InboundText, *, body: str, received_at: datetime
) -> ReceivedEcho | None:
    """Store one echo (`echo.sender`: the customer it went to) once; None when no org
    connected the number it was sent from."""
    row = await conn.fetchrow(
        RECEIVE_ECHO,
        echo.kind.value,
        echo.address,
        list(echo.sender.aliases),
        echo.sender.preferred,
        echo.message_id,
        body,
        echo.sent_at,
        received_at,
        echo.message_kind,
    )
    if row is None:
        return None
    return ReceivedEcho(row["organization_id"], row["echo_id"], row["created"], row["pending"])


class EchoOutcome(StrEnum):
    OURS = "ours"  # one of skillet's own sends: recorded, nothing else
    PHONE = "phone"  # the owner wrote from the phone: stored, the conversation is theirs
    WAIT = "wait"  # the grace has not passed yet
    MISSING = "missing"  # no such echo in this org


@dataclass(frozen=True)
class SettledEcho:
    outcome: EchoOutcome
    decided: bool  # this call settled it (False: settled before, or waiting)
    wait_s: float | None  # for WAIT: seconds left of the grace
    conversation_id: uuid.UUID | None
    mode_before: str | None  # the conversation's mode before the phone took it
    message_id: uuid.UUID | None  # the phone's message


SETTLE_ECHO = """
select outcome, decided, wait_s, conversation_id, mode_before, message_id
from skillet_settle_echo($1, $2, $3, $4)
"""


async def settle_echo(
    conn: asyncpg.Connection, organization_id: uuid.UUID, echo_id: uuid.UUID, *, grace_s: float
) -> SettledEcho:
    """Ours, the phone's, or too early to tell (see skillet_settle_echo); idempotent."""
    row = await conn.fetchrow(
        SETTLE_ECHO, organization_id, org_proof(conn, organization_id), echo_id, float(grace_s)
    )
    assert row is not None  # the function always returns one row
    return SettledEcho(
        EchoOutcome(row["outcome"]),
        row["decided"],
        row["wait_s"],
        row["conversation_id"],
        row["mode_before"],
        row["message_id"],
    )
