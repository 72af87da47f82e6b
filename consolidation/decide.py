"""A person's side of distillation proposals: list, show (with the umbrella's diff), approve,
reject, and the org's opt-in.

Approving is one transaction under the org's catalog and curator locks: every member's
pointer must still name the version the proposal was made from (else `proposal_base_moved`,
and the proposal expires); the umbrella's pointer moves to the proposed version (active again,
a `patch` of curator activity, like an approved draft); each absorbed skill is archived with
`absorbed_into` (its pointer and versions stay, so `skillet skills restore` brings it back);
audit rows for the umbrella and each absorbed skill. Rejecting keeps everything for the
record. Every refusal writes its own audit row in a transaction of its own.

ProposalError (core.errors.SkilletError)
├── proposal_not_found     no such proposal in the org
├── proposal_decided       it is no longer pending (approved, rejected or expired)
├── proposal_base_moved    a member changed since the proposal was made
└── organization_not_found
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from consolidation.distill import moved_path
from consolidation.file_read_queries import FileReads, copy_file_reads, list_file_reads
from consolidation.gates import ConsolidationMode
from consolidation.proposal_queries import (
    Proposal,
    archive_absorbed,
    fetch_proposal,
    fetch_version,
    list_proposals,
    update_proposal_decided,
)
from consolidation.queries import fetch_consolidation_mode, update_consolidation_mode
from core.audit import AuditEntry, insert_audit
from core.errors import SkilletError
from skills.catalog import catalog_lock, reactivate_installed_skill
from skills.catalog_queries import fetch_org_pointed_version
from skills.curator.queries import lock_curator_orgs
from skills.draft_diff import DraftDiff, diff_versions
from skills.queries import upsert_skill_pointer
from skills.usage import UsageBump, UsageEvent, UsageStore


class ProposalError(SkilletError):
    code = "proposal_error"


@dataclass(frozen=True)
class ProposalView:
    proposal: Proposal
    diff: DraftDiff  # the umbrella: installed now -> proposed
    # Path in the proposed umbrella -> the reads its file had where it came from.
    file_reads: dict[str, FileReads]


async def list_org_proposals(
    conn: asyncpg.Connection, organization_id: uuid.UUID, status: str | None = "pending"
) -> list[Proposal]:
    return await list_proposals(conn, organization_id, status)


async def show_proposal(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal_id: uuid.UUID
) -> ProposalView:
    proposal = await fetch_proposal(conn, organization_id, proposal_id)
    if proposal is None:
        raise _not_found(proposal_id)
    proposed = await fetch_version(conn, proposal.version_id)
    assert proposed is not None  # a foreign key: the version row exists
    installed = await fetch_org_pointed_version(conn, organization_id, proposal.umbrella)
    moves = await _moves(conn, proposal)
    reads = await list_file_reads(conn, organization_id, [m.name for m in proposal.members])
    if installed is not None:
        moves += [(proposal.umbrella, e.path, e.path) for e in installed.manifest]
    file_reads = {
        dest: reads[(skill, path)] for skill, path, dest in moves if (skill, path) in reads
    }
    diff = diff_versions(installed, proposed, label="proposta")
    return ProposalView(proposal, diff, file_reads)


async def _moves(conn: asyncpg.Connection, proposal: Proposal) -> list[tuple[str, str, str]]:
    """(absorbed skill, its file's path, that file's path under the umbrella)."""
    moves = []
    for member in proposal.members:
        if member.role != "absorbed":
            continue
        version = await fetch_version(conn, member.version_id)
        assert version is not None  # a foreign key
        moves += [(member.name, e.path, moved_path(member.name, e)) for e in version.manifest]
    return moves


async def approve_proposal(
    conn: asyncpg.Connection,
    usage: UsageStore,
    *,
    organization_id: uuid.UUID,
    proposal_id: uuid.UUID,
    actor: str,
    now: datetime,
) -> Proposal:
    await _require_org(conn, organization_id)
    try:
        async with catalog_lock(conn, organization_id), conn.transaction():
            await lock_curator_orgs(conn, [organization_id])
            proposal = await _pending(conn, organization_id, proposal_id)
            moved = await _moved_members(conn, organization_id, proposal)
            if moved:
                raise ProposalError(
                    f"{', '.join(moved)} mudou desde que a proposta foi feita; ela expirou. "
                    "O próximo ciclo propõe de novo sobre as versões atuais.",
                    code="proposal_base_moved",
                )
            umbrella = proposal.umbrella_member
            await upsert_skill_pointer(conn, organization_id, umbrella.name, proposal.version_id)
            await reactivate_installed_skill(conn, organization_id, umbrella.name)
            await usage.record(conn, [UsageBump(organization_id, umbrella.name, UsageEvent.PATCH)])
            await archive_absorbed(conn, organization_id, proposal.absorbs, umbrella.name, now)
            await copy_file_reads(
                conn, organization_id, umbrella.name, await _moves(conn, proposal)
            )
            await update_proposal_decided(conn, organization_id, proposal_id, "approved", actor)
            await _audit_approval(conn, organization_id, actor, proposal)
    except ProposalError as exc:
        await _refused(conn, organization_id, actor, "proposal.approve", proposal_id, exc)
        raise
    decided = await fetch_proposal(conn, organization_id, proposal_id)
    assert decided is not None
    return decided


async def reject_proposal(
    conn: asyncpg.Connection, *, organization_id: uuid.UUID, proposal_id: uuid.UUID, actor: str
) -> Proposal:
    await _require_org(conn, organization_id)
    try:
        async with conn.transaction():
            proposal = await _pending(conn, organization_id, proposal_id)
            await update_proposal_decided(conn, organization_id, proposal_id, "rejected", actor)
            await insert_audit(
                conn,
                AuditEntry(
                    organization_id,
                    actor,
                    "proposal.reject",
                    skill_name=proposal.umbrella,
                    detail={"proposal_id": str(proposal_id), "absorbs": list(proposal.absorbs)},
                ),
            )
    except ProposalError as exc:
        await _refused(conn, organization_id, actor, "proposal.reject", proposal_id, exc)
        raise
    decided = await fetch_proposal(conn, organization_id, proposal_id)
    assert decided is not None
    return decided


async def set_consolidation(
    conn: asyncpg.Connection, *, organization_id: uuid.UUID, mode: ConsolidationMode, actor: str
) -> ConsolidationMode:
    """Change the org's opt-in (audited); the mode it replaced."""
    async with conn.transaction():
        previous = await update_consolidation_mode(conn, organization_id, mode.value)
        if previous is None:
            raise ProposalError(
                f"A organização {organization_id} não existe.", code="organization_not_found"
            )
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                "settings.consolidation",
                detail={"from": previous, "to": mode.value},
            ),
        )
    return ConsolidationMode(previous)


async def _require_org(conn: asyncpg.Connection, organization_id: uuid.UUID) -> None:
    if await fetch_consolidation_mode(conn, organization_id) is None:
        raise ProposalError(
            f"A organização {organization_id} não existe.", code="organization_not_found"
        )


async def _pending(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal_id: uuid.UUID
) -> Proposal:
    proposal = await fetch_proposal(conn, organization_id, proposal_id, lock=True)
    if proposal is None:
        raise _not_found(proposal_id)
    if proposal.status != "pending":
        raise ProposalError(
            f"A proposta {proposal_id} já foi decidida ({proposal.status}).",
            code="proposal_decided",
        )
    return proposal


async def _moved_members(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal: Proposal
) -> list[str]:
    moved = []
    for member in proposal.members:
        current = await fetch_org_pointed_version(conn, organization_id, member.name)
        if current is None or current.version_id != member.version_id:
            moved.append(member.name)
    return moved


async def _audit_approval(
    conn: asyncpg.Connection, organization_id: uuid.UUID, actor: str, proposal: Proposal
) -> None:
    umbrella = proposal.umbrella_member
    detail = {"proposal_id": str(proposal.id), "absorbs": list(proposal.absorbs)}
    await insert_audit(
        conn,
        AuditEntry(
            organization_id,
            actor,
            "proposal.approve",
            skill_name=umbrella.name,
            before_version_id=umbrella.version_id,
            after_version_id=proposal.version_id,
            detail=detail,
        ),
    )
    for member in proposal.members:
        if member.role == "absorbed":
            await insert_audit(
                conn,
                AuditEntry(
                    organization_id,
                    actor,
                    "skill.absorb",
                    skill_name=member.name,
                    before_version_id=member.version_id,
                    after_version_id=member.version_id,
                    detail={"proposal_id": str(proposal.id), "absorbed_into": umbrella.name},
                ),
            )


async def _refused(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    action: str,
    proposal_id: uuid.UUID,
    exc: SkilletError,
) -> None:
    if exc.code == "organization_not_found":
        return
    async with conn.transaction():
        if exc.code == "proposal_base_moved":
            await update_proposal_decided(
                conn, organization_id, proposal_id, "expired", None, "member_changed"
            )
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                action,
                outcome="refused",
                detail={"code": exc.code, "proposal_id": str(proposal_id)},
            ),
        )


def _not_found(proposal_id: uuid.UUID) -> ProposalError:
    return ProposalError(
        f"Não há proposta {proposal_id} nesta organização.", code="proposal_not_found"
    )
