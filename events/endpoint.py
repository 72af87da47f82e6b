"""Change an org's events endpoint (URL, signing secret): checked, then written and audited.

Shared by `skillet orgs set` and `PATCH /v1/settings/events`. `check_change` runs before any
connection is taken (it resolves the URL's host: no pooled connection waits on DNS);
`apply_change` writes in the caller's transaction, one audit row per setting that changed.
The secret is never returned nor audited, only whether it is set or changed.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import asyncpg

from core.address_guard import AddressGuard
from core.audit import AuditEntry, insert_audit
from events.errors import EventsSecretInvalid
from events.queries import EventsEndpoint, fetch_endpoint, update_endpoint

SECRET_MIN_CHARS = 16
SECRET_MAX_CHARS = 512
MASK = "********"


@dataclass(frozen=True)
class EndpointChange:
    """What to set: `url` None leaves it, "" clears it; `secret` None leaves it."""

    url: str | None = None
    secret: str | None = None

    @property
    def empty(self) -> bool:
        return self.url is None and self.secret is None


@dataclass(frozen=True)
class EndpointChanged:
    endpoint: EventsEndpoint
    previous_url: str | None
    changed: list[str] = field(default_factory=list)  # human lines, as the CLI prints them


def check_secret(secret: str) -> str:
    """The secret as stored: stripped of surrounding whitespace, 16 to 512 characters."""
    value = secret.strip()
    if not SECRET_MIN_CHARS <= len(value) <= SECRET_MAX_CHARS or "\x00" in value:
        raise EventsSecretInvalid(
            f"o segredo de eventos deve ter de {SECRET_MIN_CHARS} a {SECRET_MAX_CHARS} "
            "caracteres (gere um com `openssl rand -hex 32`)"
        )
    return value


async def check_change(change: EndpointChange, guard: AddressGuard) -> EndpointChange:
    """The change as it will be written, or EventsUrlRefused / EventsSecretInvalid."""
    url = None if change.url is None else change.url.strip()
    if url:
        await guard.check_url(url)
    secret = None if change.secret is None else check_secret(change.secret)
    return EndpointChange(url=url, secret=secret)


async def apply_change(
    conn: asyncpg.Connection, organization_id: uuid.UUID, change: EndpointChange, actor: str
) -> EndpointChanged:
    """Write a checked change (check_change) and its audit rows, in the caller's transaction."""
    previous = await fetch_endpoint(conn, organization_id)
    if change.empty:
        return EndpointChanged(previous, previous.url)
    if change.url and change.secret is None and not previous.secret_set:
        raise EventsSecretInvalid(
            "uma URL de eventos precisa de um segredo: envie também o segredo "
            "(--events-secret-file no CLI, events_secret na API)",
            code="events_secret_missing",
        )
    new_url = None if change.url is None else (change.url or None)
    endpoint = await update_endpoint(
        conn,
        organization_id,
        url=None if change.url is None else (new_url,),
        secret=change.secret,
    )
    changed: list[str] = []
    if change.secret is not None:
        await insert_audit(
            conn,
            AuditEntry(organization_id, actor, "settings.events_secret", detail={"set": True}),
        )
        changed.append(f"events_secret: {MASK}")
    if change.url is not None and new_url != previous.url:
        detail = {"from": previous.url, "to": new_url}
        await insert_audit(
            conn, AuditEntry(organization_id, actor, "settings.events_url", detail=detail)
        )
        changed.append(f"events_url: {previous.url or '-'} -> {new_url or '-'}")
    return EndpointChanged(endpoint, previous.url, changed)


def endpoint_json(endpoint: EventsEndpoint) -> dict[str, object]:
    """As the API and the CLI show it: the secret masked, never returned."""
    return {
        "events_url": endpoint.url,
        "events_secret": MASK if endpoint.secret_set else None,
        "updated_at": None if endpoint.updated_at is None else endpoint.updated_at.isoformat(),
    }
