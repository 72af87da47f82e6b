"""Routes of the org's business hours: read them (any key) and change any part (admin).

A schedule that does not parse, an unknown time zone or a bad date answers 422 with its code
(`business_hours_invalid`, `timezone_unknown`, `closed_dates_invalid`, `after_hours_invalid`)
and a pt-BR message saying what to fix, before a connection is taken; each change is audited
in the transaction that makes it (hours.change).
"""

from __future__ import annotations

from typing import Annotated

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.bodies import read_json
from api.routing import Principal, Reply, deps_of, org_db
from hours.change import HoursChange, apply_change, check_change, hours_json
from hours.queries import fetch_business_hours
from hours.schedule import MAX_SCHEDULE_CHARS, MAX_ZONE_CHARS


async def get_hours_settings(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        stored = await fetch_business_hours(conn, principal.organization_id)
    now = deps_of(request).clock()
    return {"organization_id": str(principal.organization_id), **hours_json(stored, now)}


class HoursSettingsChange(BaseModel):
    """Any subset; `business_hours` null or "" clears the schedule (always open), and
    `closed_dates` [] clears the closed days."""

    model_config = ConfigDict(extra="forbid")

    business_hours: str | None = Field(default=None, max_length=MAX_SCHEDULE_CHARS * 2)
    timezone: str | None = Field(default=None, max_length=MAX_ZONE_CHARS * 2)
    closed_dates: list[Annotated[str, Field(max_length=32)]] | None = Field(
        default=None, max_length=400
    )
    after_hours: str | None = Field(default=None, max_length=20)


async def update_hours_settings(request: web.Request, principal: Principal) -> Reply:
    body = await read_json(request, HoursSettingsChange)
    schedule = body.business_hours
    if schedule is None and "business_hours" in body.model_fields_set:
        schedule = ""
    # At most 400 items of at most 32 characters: the parser refuses a long join at once.
    closed = None if body.closed_dates is None else ",".join(body.closed_dates)
    change = check_change(HoursChange(schedule, body.timezone, closed, body.after_hours))
    async with org_db(request, principal) as conn, conn.transaction():
        changed = await apply_change(conn, principal.organization_id, change, principal.prefix)
    now = deps_of(request).clock()
    return {
        "organization_id": str(principal.organization_id),
        **hours_json(changed.hours, now),
        "changed": [line.split(":", 1)[0] for line in changed.changed],
    }
