"""`POST /v1/rehearsals`: a change tried on the org's own customer messages (rehearsal.run),
and the confirmation the approve routes ask for when a change loses messages."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from api.bodies import PRELOADED_BODY, read_json
from api.errors import ApiError
from api.routing import Principal, Reply, deps_of
from rehearsal.changes import ChangeOf, requested_change, typed_skill
from rehearsal.confirmation import loss_message, loss_reasons
from rehearsal.errors import RehearsalError
from rehearsal.run import run_rehearsal

# Nothing pending to rehearse: the approve route answers with its own refusal.
NOT_PENDING = ("draft_not_found", "proposal_not_found")


class TypedSkill(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=200)
    description: str = Field(max_length=5_000)
    body: str = Field(max_length=100_000)
    keywords: str = Field(default="", max_length=20_000)
    probe_keywords: str = Field(default="", max_length=20_000)


class RehearsalRequest(BaseModel):
    """Exactly one change, and the period (days; the deployment's default when absent)."""

    model_config = ConfigDict(extra="forbid")

    draft: str | None = Field(default=None, max_length=200)
    proposal: uuid.UUID | None = None
    skill: TypedSkill | None = None
    uninstall: str | None = Field(default=None, max_length=200)
    days: StrictInt | None = None


def change_of_request(organization_id: uuid.UUID, body: RehearsalRequest) -> ChangeOf:
    """What the body asks to rehearse (exactly one change, else `invalid_input`); a typed
    skill is checked by the package rules here, before any connection is taken."""
    given = [k for k in ("draft", "proposal", "skill", "uninstall") if getattr(body, k) is not None]
    if len(given) != 1:
        raise ApiError(
            422,
            "invalid_input",
            "Informe exatamente uma mudança: draft, proposal, skill ou uninstall.",
        )
    s = body.skill
    return requested_change(
        organization_id,
        draft=body.draft,
        proposal=body.proposal,
        typed=None
        if s is None
        else typed_skill(s.name, s.description, s.body, s.keywords, s.probe_keywords),
        uninstalled=body.uninstall,
    )


async def create_rehearsal(request: web.Request, principal: Principal) -> Reply:
    body = await read_json(request, RehearsalRequest)
    deps = deps_of(request)
    change_of = change_of_request(principal.organization_id, body)
    rehearsal = await run_rehearsal(
        deps.pool,
        principal.organization_id,
        change_of,
        days=deps.rehearsal_days if body.days is None else body.days,
        now=deps.clock(),
        max_matched=deps.max_injected_skills,
    )
    return rehearsal.to_json()


class Confirmation(BaseModel):
    """An approve route's optional body: `confirm` (true, or a draft's "create"/"merge")."""

    model_config = ConfigDict(extra="allow")

    confirm: bool | str | None = None


async def read_confirmation(request: web.Request) -> Any:
    """The approve body's `confirm` (None when absent or empty)."""
    if not request.can_read_body and not isinstance(request.get(PRELOADED_BODY), dict):
        return None
    return (await read_json(request, Confirmation)).confirm


async def losses(
    request: web.Request, principal: Principal, change_of: ChangeOf
) -> tuple[list[str], int]:
    """The confirmation reasons a change's rehearsal gives (`loses_messages`, or none) and the
    messages it would stop recognising; none for a draft or proposal that is not pending (the
    approval itself says why)."""
    deps = deps_of(request)
    try:
        return await loss_reasons(
            deps.pool,
            principal.organization_id,
            change_of,
            days=deps.rehearsal_days,
            now=deps.clock(),
            max_matched=deps.max_injected_skills,
        )
    except RehearsalError as exc:
        if exc.code in NOT_PENDING:
            return [], 0
        raise


async def require_confirmation(
    request: web.Request, principal: Principal, change_of: ChangeOf, confirmed: bool
) -> None:
    """409 `confirmation_required` (reasons `loses_messages`) when the change loses messages
    and the body did not confirm it."""
    if confirmed:
        return
    reasons, lost = await losses(request, principal, change_of)
    if reasons:
        raise ApiError(
            409, "confirmation_required", loss_message(lost), {"reasons": reasons, "lost": lost}
        )


def draft_change(organization_id: uuid.UUID, name: str) -> ChangeOf:
    return requested_change(organization_id, draft=name)


def proposal_change(organization_id: uuid.UUID, proposal_id: uuid.UUID) -> ChangeOf:
    return requested_change(organization_id, proposal=proposal_id)
