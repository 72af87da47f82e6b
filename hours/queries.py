"""SQL of an org's business hours (org_business_hours); the caller owns the
transaction."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime

import asyncpg

DEFAULT_TIMEZONE = "America/Sao_Paulo"  # the column's default


@dataclass(frozen=True)
class StoredHours:
    """As stored: `schedule` None means no hours set (always open)."""

    schedule: str | None = None
    timezone: str = DEFAULT_TIMEZONE
    closed_dates: tuple[date, ...] = ()
    after_hours: str = "answer"
    updated_at: datetime | None = None


FETCH_BUSINESS_HOURS = """
select schedule, timezone, closed_dates, after_hours, updated_at
from org_business_hours where organization_id = $1
"""


async def fetch_business_hours(conn: asyncpg.Connection, organization_id: uuid.UUID) -> StoredHours:
    """The org's hours; the defaults (none set) when it never set any."""
    row = await conn.fetchrow(FETCH_BUSINESS_HOURS, organization_id)
    if row is None:
        return StoredHours()
    return StoredHours(
        schedule=row["schedule"],
        timezone=row["timezone"],
        closed_dates=tuple(row["closed_dates"]),
        after_hours=row["after_hours"],
        updated_at=row["updated_at"],
    )


UPSERT_BUSINESS_HOURS = """
insert into org_business_hours (organization_id, schedule, timezone, closed_dates, after_hours)
values ($1, $2, $3, $4, $5)
on conflict (organization_id) do update set
    schedule = excluded.schedule, timezone = excluded.timezone,
    closed_dates = excluded.closed_dates, after_hours = excluded.after_hours, updated_at = now()
returning updated_at
"""


async def upsert_business_hours(
    conn: asyncpg.Connection, organization_id: uuid.UUID, hours: StoredHours
) -> StoredHours:
    """Write all of `hours` (read it first, change what is given); returns it as stored."""
    updated_at = await conn.fetchval(
        UPSERT_BUSINESS_HOURS,
        organization_id,
        hours.schedule,
        hours.timezone,
        list(hours.closed_dates),
        hours.after_hours,
    )
    return StoredHours(
        hours.schedule, hours.timezone, hours.closed_dates, hours.after_hours, updated_at
    )
