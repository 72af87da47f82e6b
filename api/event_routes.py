"""Routes of the org's events webhook settings: its URL and signing secret (admin only).

The secret is write-only: answers show it masked (`********`) when set, null when not. The
URL is checked before a connection is taken (https, a public host: core.addresses; 422
`events_url_refused`); each change is audited in the transaction that makes it
(events.endpoint).
"""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.bodies import read_json
from api.routing import Principal, Reply, deps_of, org_db
from core.address_guard import AddressGuard
from events.endpoint import SECRET_MAX_CHARS, EndpointChange, apply_change, check_change
from events.endpoint import endpoint_json as _endpoint_json
from events.queries import fetch_endpoint


async def get_events_settings(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        endpoint = await fetch_endpoint(conn, principal.organization_id)
    return {"organization_id": str(principal.organization_id), **_endpoint_json(endpoint)}


class EventsSettingsChange(BaseModel):
    """Either or both; `events_url` null or "" clears it (the secret stays for a next URL)."""

    model_config = ConfigDict(extra="forbid")

    events_url: str | None = Field(default=None, max_length=4096)
    events_secret: str | None = Field(default=None, max_length=SECRET_MAX_CHARS * 2)


async def update_events_settings(request: web.Request, principal: Principal) -> Reply:
    body = await read_json(request, EventsSettingsChange)
    url = body.events_url
    if url is None and "events_url" in body.model_fields_set:
        url = ""
    guard = AddressGuard(allow_private=deps_of(request).events_allow_private_urls)
    change = await check_change(EndpointChange(url=url, secret=body.events_secret), guard)
    async with org_db(request, principal) as conn, conn.transaction():
        changed = await apply_change(conn, principal.organization_id, change, principal.prefix)
    return {
        "organization_id": str(principal.organization_id),
        **_endpoint_json(changed.endpoint),
        "previous_url": changed.previous_url,
        "changed": [line.split(":", 1)[0] for line in changed.changed],
    }
