"""The clock a console page is drawn with: the API's clock and the org's time zone (its
business hours' zone, America/Sao_Paulo until it sets one)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from aiohttp import web

from api.console.moments import Clock
from api.routing import Principal, deps_of, org_db
from core.db_errors import db_errors
from hours.errors import TimezoneUnknown
from hours.queries import DEFAULT_TIMEZONE, fetch_business_hours
from hours.schedule import load_zone

# One clock per request: the page and the views it builds say every time from the same instant.
CLOCK = web.RequestKey("console_clock", Clock)


async def org_clock(request: web.Request, principal: Principal) -> Clock:
    if CLOCK in request:
        return request[CLOCK]
    with db_errors("console clock"):
        async with org_db(request, principal) as conn:
            stored = await fetch_business_hours(conn, principal.organization_id)
    try:
        zone = load_zone(stored.timezone)
    except TimezoneUnknown:  # stored zones are checked on write; a tzdata change is not
        zone = ZoneInfo(DEFAULT_TIMEZONE)
    request[CLOCK] = clock = Clock(now=deps_of(request).clock(), zone=zone)
    return clock
