"""Routes of agent-authored drafts (list, show with diff, approve, reject) and the org's
settings (`agent_authoring`, `consolidation`). The decisions are skills.drafts' and
consolidation.decide's, which audit themselves. Each pending draft names the installed
skills it is close to (`close_to`), so a duplicate is seen before it is approved."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import asyncpg
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from api.bodies import read_json
from api.errors import ApiError
from api.media_routes import FILE_HEADERS, attachment
from api.pagination import page_of, parse_limit, read_cursor, time_id_keyset
from api.rehearsal_routes import draft_change, losses
from api.routing import Principal, Reply, deps_of, org_db
from consolidation.decide import set_consolidation
from consolidation.gates import ConsolidationMode
from consolidation.measure import VersionText
from consolidation.neighbours import Measured, Neighbour, measured_close_to
from consolidation.queries import fetch_consolidation_mode
from consolidation.similarity import SkillText
from conversation.satisfaction import ButtonsRefused, checked_buttons
from conversation.satisfaction_queries import fetch_satisfaction_settings
from conversation.satisfaction_settings import change_satisfaction
from inbox.file_names import safe_file_name
from rehearsal.confirmation import loss_message
from skills.draft_merge import merge_draft
from skills.draft_queries import (
    AuthoringMode,
    Draft,
    DraftStatus,
    fetch_agent_authoring,
    list_drafts,
)
from skills.drafts import (
    Decision,
    DraftError,
    approve_draft,
    locate_draft_file,
    reject_draft,
    set_agent_authoring,
    show_draft,
)
from skills.edit_package import matcher_texts
from skills.models import SkillMatcher
from skills.publisher import content_type_of
from skills.queries import list_installed_skills
from skills.skill_view import read_file
from suggestions.queries import fetch_draft_suggestion

# What `confirm` a draft's approval takes (the similarity issue's words for "publish anyway").


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
        hints = await _close_to(request, conn, principal.organization_id, page.items)
    items = [{**d.to_json(), "close_to": h} for d, h in zip(page.items, hints, strict=True)]
    return {"items": items, "next": page.next}


async def _measure(
    request: web.Request,
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    drafts: Sequence[Draft],
) -> Measured:
    """The installed skills each draft is close to, by the backend in use."""
    installed = await list_installed_skills(conn, organization_id)
    return await measured_close_to(
        conn,
        organization_id,
        [_text(d.version.version_id, d.version) for d in drafts],
        [_text(s.version_id, s) for s in installed],
        deps_of(request).similarity,
    )


async def _close_to(
    request: web.Request,
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    drafts: Sequence[Draft],
) -> list[list[dict[str, object]] | None]:
    """Per draft, the installed skills it is close to (none for a decided draft; None while
    its vectors are not there yet)."""
    pending = [d for d in drafts if d.status is DraftStatus.PENDING]
    if not pending:
        return [[] for _ in drafts]
    found = (await _measure(request, conn, organization_id, pending)).neighbours
    by_id = {
        d.id: None if near is None else [n.to_json() for n in near]
        for d, near in zip(pending, found, strict=True)
    }
    return [by_id.get(d.id, []) for d in drafts]


class _Texted(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def body(self) -> str: ...
    @property
    def matcher(self) -> SkillMatcher: ...


def _text(version_id: uuid.UUID, skill: _Texted) -> VersionText:
    text = SkillText(skill.name, skill.description, skill.body, skill.matcher.any_keywords)
    return VersionText(version_id, text)


async def show_draft_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        draft, diff = await show_draft(conn, principal.organization_id, request.match_info["name"])
        [hints] = await _close_to(request, conn, principal.organization_id, [draft])
        suggestion = await fetch_draft_suggestion(conn, principal.organization_id, draft.name)
        same = await _closest(request, conn, principal.organization_id, draft.name)
    keywords, probes = matcher_texts(draft.version.matcher)
    return {
        "suggestion": None if suggestion is None else suggestion[1],
        **draft.to_json(),
        "body": draft.version.body,
        # As an installed skill's page reads them (GET /v1/skills/{name}): the package's
        # comma-separated keyword strings and the draft version's files.
        "keywords": keywords,
        "probe_keywords": probes,
        "files": [
            {"path": e.path, "size": e.size, "kind": str(e.kind)} for e in draft.version.manifest
        ],
        "diff": diff.to_json(),
        "close_to": hints,
        # The installed skill approving must choose about (create anyway or merge), or None.
        "same_as": None if same is None else same.to_json(),
    }


async def download_draft_file_route(request: web.Request, principal: Principal) -> web.Response:
    """A pending draft's file, as GET /v1/skills/{name}/files/{path} serves an installed
    skill's: an attachment, nosniff, Content-Type as stored."""
    name, path = request.match_info["name"], request.match_info["path"]
    async with org_db(request, principal) as conn:
        key, entry = await locate_draft_file(conn, principal.organization_id, name, path)
    found = await read_file(deps_of(request).store, key, entry)
    content_type = content_type_of(path, entry.kind)
    return web.Response(
        body=found.data,
        content_type=content_type.split(";")[0],
        charset="utf-8" if content_type.endswith("utf-8") else None,
        headers={
            **FILE_HEADERS,
            "Content-Disposition": attachment(safe_file_name(path.rsplit("/", 1)[-1]) or "arquivo"),
        },
    )


def _decision_json(decision: Decision) -> dict[str, Any]:
    return {
        "name": decision.name,
        "draft_id": str(decision.draft_id),
        "status": decision.status.value,
        "before_version_id": _str(decision.before_version_id),
        "after_version_id": _str(decision.after_version_id),
        "reactivated_from": decision.reactivated_from,
    }


class Approval(BaseModel):
    """`confirm`: the choice a draft close to an installed skill needs (see approve)."""

    model_config = ConfigDict(extra="forbid")

    confirm: Literal["create", "merge"] | None = None


async def approve_draft_route(request: web.Request, principal: Principal) -> Reply:
    """Approve a pending draft. When its closest installed skill scores at or above the
    backend's "same thing" line, a choice is required: `{"confirm": "create"}` installs it
    anyway, `{"confirm": "merge"}` makes a new version of that skill with the draft's text
    and keywords added (skills.draft_merge). So does a draft whose rehearsal on the org's
    recent customer messages loses some (either choice confirms it). Without one, 409
    `confirmation_required`, whose `reasons` list names each reason ("similar": `similar_to`
    says which skill; "loses_messages": `lost` says how many)."""
    approval = await read_json(request, Approval)  # no body: {}
    name = request.match_info["name"]
    org = principal.organization_id
    # Tried on the org's recent customer messages first (no connection held while it runs).
    reasons: list[str] = []
    lost = 0
    if approval.confirm is None:
        reasons, lost = await losses(request, principal, draft_change(org, name))
    async with org_db(request, principal) as conn:
        closest = await _closest(request, conn, org, name)
        if approval.confirm is None and (closest is not None or reasons):
            raise _confirmation_required(name, closest, reasons, lost)
        if approval.confirm == "merge":
            if closest is None:
                await show_draft(conn, org, name)  # no such draft: draft_not_found
                raise ApiError(
                    409,
                    "nothing_to_merge",
                    f"O rascunho {name} não se parece com nenhuma skill instalada; aprove-o "
                    "sem juntar.",
                )
            decision = await merge_draft(
                conn,
                deps_of(request).store,
                organization_id=org,
                name=name,
                into=closest.name,
                actor=principal.prefix,
            )
            return {**_decision_json(decision), "merged_into": closest.name}
        decision = await approve_draft(
            conn, deps_of(request).usage, organization_id=org, name=name, actor=principal.prefix
        )
    return _decision_json(decision)


def _confirmation_required(
    name: str, closest: Neighbour | None, reasons: list[str], lost: int
) -> ApiError:
    """409 `confirmation_required`: each reason in `reasons` ("similar" with `similar_to`,
    "loses_messages" with `lost`), each said in the message."""
    said: list[str] = []
    extra: dict[str, Any] = {}
    if closest is not None:
        said.append(
            f"O rascunho {name} parece ser a mesma coisa que a skill {closest.name} "
            f'(semelhança {closest.score:.2f}): criar mesmo assim ({{"confirm": "create"}}) '
            'ou juntar à skill existente ({"confirm": "merge"}).'
        )
        extra["similar_to"] = closest.to_json()
    if reasons:
        said.append(loss_message(lost))
        extra["lost"] = lost
    every = (["similar"] if closest is not None else []) + reasons
    return ApiError(409, "confirmation_required", " ".join(said), {"reasons": every, **extra})


async def _closest(
    request: web.Request, conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> Neighbour | None:
    """The installed skill the pending draft is the same thing as, if any (at or above the
    backend's "same thing" line); not measured yet counts as none."""
    try:
        draft, _ = await show_draft(conn, organization_id, name)
    except DraftError:
        return None  # no such pending draft: approving it refuses (and audits) as before
    measured = await _measure(request, conn, organization_id, [draft])
    [near] = measured.neighbours
    if not near or near[0].score < measured.same_line:
        return None
    return near[0]


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
        satisfaction = await fetch_satisfaction_settings(conn, principal.organization_id)
    assert mode is not None and satisfaction is not None  # a live key's org exists
    return {
        "organization_id": str(principal.organization_id),
        "agent_authoring": mode.value,
        "consolidation": consolidation,
        **satisfaction.as_json(),
    }


class SettingsChange(BaseModel):
    """Any subset of the settings (at least one)."""

    model_config = ConfigDict(extra="forbid")

    agent_authoring: AuthoringMode | None = None
    consolidation: ConsolidationMode | None = None
    satisfaction: Literal["on", "off"] | None = None
    # The three button texts, best first (each 1-20 characters, all different).
    satisfaction_buttons: list[str] | None = Field(default=None, max_length=3)


def _buttons(change: SettingsChange) -> tuple[str, str, str] | None:
    if change.satisfaction_buttons is None:
        return None
    try:
        return checked_buttons([b[:100] for b in change.satisfaction_buttons])
    except ButtonsRefused as exc:
        raise ApiError(
            422, "satisfaction_buttons_invalid", str(exc), {"field": "satisfaction_buttons"}
        ) from None


async def update_settings(request: web.Request, principal: Principal) -> Reply:
    change = await read_json(request, SettingsChange)
    buttons = _buttons(change)
    if change.model_dump(exclude_none=True) == {}:
        raise ApiError(
            422,
            "invalid_input",
            "Informe agent_authoring, consolidation, satisfaction e/ou satisfaction_buttons.",
        )
    org = principal.organization_id
    previous: dict[str, Any] = {}
    async with org_db(request, principal) as conn, conn.transaction():
        if change.satisfaction is not None or buttons is not None:
            replaced = await change_satisfaction(
                conn,
                org,
                principal.prefix,
                enabled=None if change.satisfaction is None else change.satisfaction == "on",
                buttons=buttons,
            )
            previous.update(
                {k: v for k, v in replaced.as_json().items() if k in change.model_fields_set}
            )
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
        satisfaction = await fetch_satisfaction_settings(conn, org)
    assert mode is not None and satisfaction is not None
    return {
        "organization_id": str(org),
        "agent_authoring": mode.value,
        "consolidation": consolidation,
        **satisfaction.as_json(),
        # The value each given setting replaced; for agent_authoring alone, as before.
        "previous": previous.get("agent_authoring")
        if list(previous) == ["agent_authoring"]
        else previous,
    }
