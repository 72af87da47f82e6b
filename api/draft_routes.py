"""Routes of agent-authored drafts (list, show with diff, approve, reject) and the org's
settings (`agent_authoring`). The decisions are skills.drafts', which audit themselves."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.errors import ApiError
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.routing import Principal, Reply, deps_of, org_db
from skills.draft_queries import (
    AuthoringMode,
    DraftStatus,
    fetch_agent_authoring,
    list_drafts,
)
from skills.drafts import Decision, approve_draft, reject_draft, set_agent_authoring, show_draft


def _str(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def _status(query: Any) -> DraftStatus | None:
    text = query.get("status", DraftStatus.PENDING.value)
    if text == "all":
        return None
    try:
        return DraftStatus(text)
    except ValueError:
        raise ApiError(
            400, "invalid_status", "`status` deve ser pending, approved, rejected ou all."
        ) from None


async def list_drafts_route(request: web.Request, principal: Principal) -> Reply:
    status = _status(request.query)
    limit = parse_limit(request.query)
    before = read_cursor("drafts", request.query, time_id_keyset)
    async with org_db(request, principal) as conn:
        drafts = await list_drafts(
            conn, principal.organization_id, status=status, limit=limit + 1, before=before
        )
    page = page_of(drafts, limit, "drafts", lambda d: [d.updated_at.isoformat(), str(d.id)])
    return {"items": [d.to_json() for d in page.items], "next": page.next}


async def show_draft_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        draft, diff = await show_draft(conn, principal.organization_id, request.match_info["name"])
    return {**draft.to_json(), "body": draft.version.body, "diff": diff.to_json()}


def _decision_json(decision: Decision) -> dict[str, Any]:
    return {
        "name": decision.name,
        "draft_id": str(decision.draft_id),
        "status": decision.status.value,
        "before_version_id": _str(decision.before_version_id),
        "after_version_id": _str(decision.after_version_id),
        "reactivated_from": decision.reactivated_from,
    }


async def approve_draft_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        decision = await approve_draft(
            conn,
            deps_of(request).usage,
            organization_id=principal.organization_id,
            name=request.match_info["name"],
            actor=principal.prefix,
        )
    return _decision_json(decision)


async def reject_draft_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        decision = await reject_draft(
            conn,
            organization_id=principal.organization_id,
            name=request.match_info["name"],
            actor=principal.prefix,
        )
    return _decision_json(decision)


async def get_settings(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        mode = await fetch_agent_authoring(conn, principal.organization_id)
    assert mode is not None  # a live key's org exists (foreign key)
    return {"organization_id": str(principal.organization_id), "agent_authoring": mode.value}


class SettingsChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    agent_authoring: AuthoringMode


async def update_settings(request: web.Request, principal: Principal) -> Reply:
    change = await read_json(request, SettingsChange)
    async with org_db(request, principal) as conn:
        previous = await set_agent_authoring(
            conn,
            organization_id=principal.organization_id,
            mode=change.agent_authoring,
            actor=principal.prefix,
        )
    return {
        "organization_id": str(principal.organization_id),
        "agent_authoring": change.agent_authoring.value,
        "previous": previous.value,
    }
