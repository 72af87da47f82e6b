"""Routes an admin key may call: the org's API keys and its agents (persona, model); its
WhatsApp numbers are api.channel_routes'. Each change is audited in its own transaction."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Protocol

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.agent_change import AgentChange, apply_agent_change
from api.bodies import read_json
from api.errors import not_found
from api.key_queries import insert_api_key, list_api_keys, update_api_key_revoked
from api.keys import Role, mint_key
from api.pagination import page_sorted, time_id_keyset
from api.routing import Principal, Reply, org_db
from core.audit import AuditEntry, insert_audit
from turn.agent_queries import fetch_agent, list_agents, update_agent

MINT_ATTEMPTS = 5  # prefixes are 36^8: a collision is rare, five in a row never happens


class _Created(Protocol):
    @property
    def created_at(self) -> datetime: ...

    @property
    def id(self) -> uuid.UUID: ...


def _created(row: _Created) -> tuple[datetime, uuid.UUID]:
    """The order the queries read these lists in (created_at, id), as a keyset."""
    return row.created_at, row.id


def _audit(principal: Principal, action: str, **detail: Any) -> AuditEntry:
    return AuditEntry(principal.organization_id, principal.prefix, action, detail=detail)


async def list_keys(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        keys = await list_api_keys(conn, principal.organization_id)
    page = page_sorted(keys, request.query, "api_keys", _created, time_id_keyset)
    return {"items": [k.to_json() for k in page.items], "next": page.next}


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    name: str | None = Field(default=None, min_length=1, max_length=100)


async def create_key(request: web.Request, principal: Principal) -> Reply:
    wanted = await read_json(request, KeyRequest)
    async with org_db(request, principal) as conn, conn.transaction():
        for _ in range(MINT_ATTEMPTS):
            minted = mint_key()
            created = await insert_api_key(
                conn, principal.organization_id, minted, wanted.role, wanted.name
            )
            if created is not None:
                break
        else:
            raise RuntimeError("api key prefixes collided five times")
        await insert_audit(
            conn, _audit(principal, "api_key.create", prefix=created.prefix, role=wanted.role)
        )
    # The key itself is in this answer only; the database keeps its hash.
    return {**created.to_json(), "key": minted.key}


async def revoke_key(request: web.Request, principal: Principal) -> Reply:
    prefix = request.match_info["prefix"]
    async with org_db(request, principal) as conn, conn.transaction():
        revoked = await update_api_key_revoked(conn, principal.organization_id, prefix)
        if revoked is None:
            raise not_found("api_key_not_found", f"Esta organização não tem a chave {prefix}.")
        await insert_audit(conn, _audit(principal, "api_key.revoke", prefix=prefix))
    return revoked.to_json()


async def list_agents_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        agents = await list_agents(conn, principal.organization_id)
    page = page_sorted(agents, request.query, "agents", _created, time_id_keyset)
    return {"items": [a.as_json() for a in page.items], "next": page.next}


def _agent_id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise _agent_not_found() from None


def _agent_not_found() -> Exception:
    return not_found("agent_not_found", "Esse agente não existe nesta organização.")


async def update_agent_route(request: web.Request, principal: Principal) -> Reply:
    agent_id = _agent_id(request)
    change = await read_json(request, AgentChange)
    async with org_db(request, principal) as conn, conn.transaction():
        agent = await fetch_agent(conn, agent_id)
        if agent is None or agent.organization_id != principal.organization_id:
            raise _agent_not_found()
        updated = await update_agent(conn, apply_agent_change(agent, change))
        changed = sorted(change.model_fields_set)
        await insert_audit(
            conn, _audit(principal, "agent.update", agent_id=str(agent_id), fields=changed)
        )
    return updated.as_json()
