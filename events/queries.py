"""SQL of the events webhook: an org's endpoint (URL, whether a secret is set), and the
delivery's claim and settle (skillet_claim_events / skillet_settle_events, the worker's)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from events.backoff import Settlement


@dataclass(frozen=True)
class EventsEndpoint:
    url: str | None
    secret_set: bool
    updated_at: datetime | None


FETCH_ENDPOINT = """
select url, secret_set, updated_at from org_event_settings where organization_id = $1
"""


async def fetch_endpoint(conn: asyncpg.Connection, organization_id: uuid.UUID) -> EventsEndpoint:
    """The org's endpoint; no URL and no secret when it never set one."""
    row = await conn.fetchrow(FETCH_ENDPOINT, organization_id)
    if row is None:
        return EventsEndpoint(url=None, secret_set=False, updated_at=None)
    return EventsEndpoint(**dict(row))


LOCK_ENDPOINT = """
insert into org_event_settings (organization_id) values ($1)
on conflict (organization_id) do nothing
"""
# Each column by its own statement: the API's role may not read `secret`, so no statement
# of it may mention the column outside SET. The secret first: a URL needs one (a check).
UPDATE_SECRET = """
update org_event_settings set secret = $2, updated_at = now() where organization_id = $1
returning url, secret_set, updated_at
"""
UPDATE_URL = """
update org_event_settings set url = $2, updated_at = now() where organization_id = $1
returning url, secret_set, updated_at
"""


async def update_endpoint(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    url: tuple[str | None] | None,
    secret: str | None,
) -> EventsEndpoint:
    """Set what is given (`url=(None,)` clears the URL; `url=None` leaves it), in the
    caller's transaction. Raises asyncpg.CheckViolationError for a URL without a secret."""
    await conn.execute(LOCK_ENDPOINT, organization_id)
    if secret is not None:
        await conn.execute(UPDATE_SECRET, organization_id, secret)
    if url is not None:
        await conn.execute(UPDATE_URL, organization_id, url[0])
    return await fetch_endpoint(conn, organization_id)


@dataclass(frozen=True)
class ClaimedEvent:
    id: uuid.UUID
    organization_id: uuid.UUID
    type: str
    payload: dict[str, Any]
    attempts: int  # this one included
    created_at: datetime
    url: str | None  # None: the org cleared its URL since
    secret: str | None
    claim_id: uuid.UUID

    def __repr__(self) -> str:  # the secret stays out of logs
        return f"ClaimedEvent(id={self.id}, type={self.type}, attempts={self.attempts})"


CLAIM_EVENTS = "select * from skillet_claim_events($1, $2)"


async def claim_events(conn: asyncpg.Connection, limit: int, lease_s: float) -> list[ClaimedEvent]:
    return [ClaimedEvent(**dict(r)) for r in await conn.fetch(CLAIM_EVENTS, limit, lease_s)]


SETTLE_EVENTS = "select skillet_settle_events($1, $2, $3, $4, $5)"


async def settle_events(
    conn: asyncpg.Connection,
    claim_id: uuid.UUID,
    settled: Sequence[tuple[uuid.UUID, Settlement]],
) -> int:
    """How many of the claim's events were settled (fewer: another claim took them)."""
    value = await conn.fetchval(
        SETTLE_EVENTS,
        claim_id,
        [event_id for event_id, _ in settled],
        [s.outcome.value for _, s in settled],
        [s.retry_in_s for _, s in settled],
        [s.error for _, s in settled],
    )
    return int(value)
