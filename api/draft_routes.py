"""Routes of agent-authored drafts (list, show with diff, approve, reject) and the org's
settings (`agent_authoring`, `consolidation`). The decisions are skills.drafts' and
consolidation.decide's, which audit themselves. Each pending draft names the installed
skills it is close to (`close_to`), so a duplicate is seen before it is approved."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
from aiohttp import web
from pydantic import BaseModel, ConfigDict

from api.bodies import read_json
from api.errors import ApiError
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.rehearsal_routes import draft_change, read_confirmation, require_confirmation
from api.routing import Principal, Reply, deps_of, org_db
from consolidation.decide import set_consolidation
from consolidation.gates import ConsolidationMode
from consolidation.neighbours import close_to
from consolidation.queries import fetch_consolidation_mode
from consolidation.similarity import SkillText
from skills.draft_queries import (
    AuthoringMode,
    Draft,
    DraftStatus,
    fetch_agent_authoring,
    list_drafts,
)
from skills.drafts import Decision, approve_draft, reject_draft, set_agent_authoring, show_draft
from skills.models import SkillMatcher
from skills.queries import list_installed_skills
from suggestions.queries import fetch_draft_suggestion

# What `confirm` a draft's approval takes (the similarity issue's words for "publish anyway").
DRAFT_CONFIRMATIONS = ("create", "merge")


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
        hints = await _close_to(conn, principal.organization_id, page.items)
    items = [{**d.to_json(), "close_to": h} for d, h in zip(page.items, hints, strict=True)]
    return {"items": items, "next": page.next}


async def _close_to(
    conn: asyncpg.Connection, organization_id: uuid.UUID, drafts: Sequence[Draft]
) -> list[list[dict[str, object]]]:
    """Per draft, the installed skills it is close to (none for a decided draft)."""
    pending = [d for d in drafts if d.status is DraftStatus.PENDING]
    if not pending:
        return [[] for _ in drafts]
    installed = await list_installed_skills(conn, organization_id)
    found = close_to(
        [
            _text(d.version.name, d.version.description, d.version.body, d.version.matcher)
            for d in pending
        ],
        [_text(s.name, s.description, s.body, s.matcher) for s in installed],
    )
    by_id = {d.id: [n.to_json() for n in near] for d, near in zip(pending, found, strict=True)}
    return [by_id.get(d.id, []) for d in drafts]


def _text(name: str, description: str, body: str, matcher: SkillMatcher) -> SkillText:
    return SkillText(name, description, body, matcher.any_keywords)


async def show_draft_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        draft, diff = await show_draft(conn, principal.organization_id, request.match_info["name"])
        [hints] = await _close_to(conn, principal.organization_id, [draft])
        suggestion = await fetch_draft_suggestion(conn, principal.organization_id, draft.name)
    return {
        "suggestion": None if suggestion is None else suggestion[1],
        **draft.to_json(),
        "body": draft.version.body,
        "diff": diff.to_json(),
        "close_to": hints,
    }


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
    name = request.match_info["name"]
    confirm = await read_confirmation(request)
    await require_confirmation(
        request,
        principal,
        draft_change(principal.organization_id, name),
        confirmed=confirm in DRAFT_CONFIRMATIONS,
    )
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
        consolidation = await fetch_consolidation_mode(conn, principal.organization_id)
    assert mode is not None  # a live key's org exists (foreign key)
    return {
        "organization_id": str(principal.organization_id),
        "agent_authoring": mode.value,
        "consolidation": consolidation,
    }


class SettingsChange(BaseModel):
    """Any subset of the settings (at least one)."""

    model_config = ConfigDict(extra="forbid")

    agent_authoring: AuthoringMode | None = None
    consolidation: ConsolidationMode | None = None


async def update_settings(request: web.Request, principal: Principal) -> Reply:
    change = await read_json(request, SettingsChange)
    if change.agent_authoring is None and change.consolidation is None:
        raise ApiError(422, "invalid_input", "Informe agent_authoring e/ou consolidation.")
    org = principal.organization_id
    previous: dict[str, str] = {}
    async with org_db(request, principal) as conn, conn.transaction():
        if change.agent_authoring is not None:
            was = await set_agent_authoring(
                conn, organization_id=org, mode=change.agent_authoring, actor=principal.prefix
            )
            previous["agent_authoring"] = was.value
        if change.consolidation is not None:
            was_mode = await set_consolidation(
                conn, organization_id=org, mode=change.consolidation, actor=principal.prefix
            )
            previous["consolidation"] = was_mode.value
        mode = await fetch_agent_authoring(conn, org)
        consolidation = await fetch_consolidation_mode(conn, org)
    assert mode is not None
    return {
        "organization_id": str(org),
        "agent_authoring": mode.value,
        "consolidation": consolidation,
        # The value each given setting replaced; for agent_authoring alone, as before.
        "previous": previous.get("agent_authoring")
        if list(previous) == ["agent_authoring"]
        else previous,
    }
