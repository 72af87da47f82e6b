"""Routes of distillation proposals (list, show with the umbrella's diff, approve, reject).
The decisions are consolidation.decide's, which audit themselves."""

from __future__ import annotations

import uuid
from typing import Any

from aiohttp import web

from api.errors import ApiError
from api.rehearsal_routes import proposal_change, read_confirmation, require_confirmation
from api.routing import Principal, Reply, deps_of, org_db
from consolidation.decide import (
    approve_proposal,
    list_org_proposals,
    reject_proposal,
    show_proposal,
)
from consolidation.proposal_queries import Proposal

STATUSES = ("pending", "approved", "rejected", "expired", "all")
# Said wherever a person restores an absorbed skill or reads an approved merge.
BOTH_MATCH_NOTE = (
    "A skill que absorveu mantém as palavras-chave da restaurada: as duas podem ser acionadas "
    "pela mesma mensagem até alguém editar uma delas."
)


def _id(request: web.Request) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info["id"])
    except ValueError:
        raise ApiError(404, "proposal_not_found", "Proposta não encontrada.") from None


def _status(query: Any) -> str | None:
    text = query.get("status", "pending")
    if text not in STATUSES:
        raise ApiError(
            400, "invalid_status", "`status` deve ser pending, approved, rejected, expired ou all."
        )
    return None if text == "all" else str(text)


async def list_proposals_route(request: web.Request, principal: Principal) -> Reply:
    status = _status(request.query)
    async with org_db(request, principal) as conn:
        proposals = await list_org_proposals(conn, principal.organization_id, status)
    return {"items": [p.to_json() for p in proposals], "next": None}


async def show_proposal_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        view = await show_proposal(conn, principal.organization_id, _id(request))
    reads = {path: r.to_json() for path, r in sorted(view.file_reads.items())}
    return {**view.proposal.to_json(), "diff": view.diff.to_json(), "file_reads": reads}


def _decided(proposal: Proposal) -> dict[str, Any]:
    return {
        **proposal.to_json(),
        "note": BOTH_MATCH_NOTE if proposal.status == "approved" else None,
    }


async def approve_proposal_route(request: web.Request, principal: Principal) -> Reply:
    deps = deps_of(request)
    proposal_id = _id(request)
    confirm = await read_confirmation(request)
    await require_confirmation(
        request,
        principal,
        proposal_change(principal.organization_id, proposal_id),
        confirmed=confirm is True,
    )
    async with org_db(request, principal) as conn:
        proposal = await approve_proposal(
            conn,
            deps.usage,
            organization_id=principal.organization_id,
            proposal_id=_id(request),
            actor=principal.prefix,
            now=deps.clock(),
        )
    return _decided(proposal)


async def reject_proposal_route(request: web.Request, principal: Principal) -> Reply:
    async with org_db(request, principal) as conn:
        proposal = await reject_proposal(
            conn,
            organization_id=principal.organization_id,
            proposal_id=_id(request),
            actor=principal.prefix,
        )
    return _decided(proposal)
