"""A person's side of agent-authored drafts: list, show (and a file's bytes), approve,
reject; the authoring mode.

Approving moves the skill's pointer to the draft's version, in one transaction with the
draft's decision, the usage row (active again, a `patch` of curator activity) and an audit
row. It is refused (`draft_base_moved`) when the pointer no longer names the version the
draft began from: someone changed the skill meanwhile, and approving would silently undo
that; the agent or a person re-drafts. Rejecting keeps the draft and its version for the
record. Every refusal writes its own audit row in a transaction of its own.

DraftError (core.errors.SkilletError)
├── draft_not_found      no pending draft of that skill
├── draft_base_moved     the installed version changed since the draft began
└── organization_not_found
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from core.audit import AuditEntry, insert_audit
from core.errors import SkilletError
from core.object_store import object_key
from skills.catalog import catalog_lock, reactivate_installed_skill
from skills.catalog_queries import fetch_org_pointed_version
from skills.curator.queries import lock_curator_orgs
from skills.draft_diff import DraftDiff, diff_versions
from skills.draft_queries import (
    AuthoringMode,
    Draft,
    DraftStatus,
    fetch_pending_draft,
    lock_pending_draft,
    update_agent_authoring,
    update_draft_decided,
)
from skills.editing_errors import SkillFileNotFound
from skills.models import ManifestEntry
from skills.queries import upsert_skill_pointer
from skills.usage import UsageBump, UsageEvent, UsageStore


class DraftError(SkilletError):
    code = "draft_error"


@dataclass(frozen=True)
class Decision:
    name: str
    draft_id: uuid.UUID
    status: DraftStatus
    before_version_id: uuid.UUID | None  # what was installed before
    after_version_id: uuid.UUID | None  # what is installed now
    reactivated_from: str | None = None


async def show_draft(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> tuple[Draft, DraftDiff]:
    """The pending draft of `name` and its diff against what is installed now."""
    draft = await fetch_pending_draft(conn, organization_id, name)
    if draft is None:
        raise _not_found(name)
    installed = await fetch_org_pointed_version(conn, organization_id, name)
    return draft, diff_versions(installed, draft.version)


async def locate_draft_file(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, path: str
) -> tuple[str, ManifestEntry]:
    """The object key and manifest entry of `path` in the pending draft of `name` (a draft's
    files are stored under its own version id, as a published version's are)."""
    draft = await fetch_pending_draft(conn, organization_id, name)
    if draft is None:
        raise _not_found(name)
    entry = next((e for e in draft.version.manifest if e.path == path), None)
    if entry is None:
        raise SkillFileNotFound(name, path)
    return object_key(organization_id, name, draft.version.version_id, path), entry


async def approve_draft(
    conn: asyncpg.Connection,
    usage: UsageStore,
    *,
    organization_id: uuid.UUID,
    name: str,
    actor: str,
) -> Decision:
    try:
        async with catalog_lock(conn, organization_id), conn.transaction():
            await lock_curator_orgs(conn, [organization_id])
            draft = await lock_pending_draft(conn, organization_id, name)
            if draft is None:
                raise _not_found(name)
            installed = await fetch_org_pointed_version(conn, organization_id, name)
            installed_id = None if installed is None else installed.version_id
            if installed_id != draft.base_version_id:
                raise DraftError(
                    f"A skill {name} mudou desde que o rascunho começou (instalada: "
                    f"{installed_id or 'nenhuma'}; rascunho feito sobre "
                    f"{draft.base_version_id or 'nenhuma'}). Rejeite este rascunho; o agente "
                    "ou uma pessoa pode propor a mudança de novo sobre a versão atual.",
                    code="draft_base_moved",
                )
            await upsert_skill_pointer(conn, organization_id, name, draft.version.version_id)
            await update_draft_decided(conn, organization_id, draft.id, DraftStatus.APPROVED, actor)
            previous = await reactivate_installed_skill(conn, organization_id, name)
            await usage.record(conn, [UsageBump(organization_id, name, UsageEvent.PATCH)])
            decision = Decision(
                name,
                draft.id,
                DraftStatus.APPROVED,
                installed_id,
                draft.version.version_id,
                previous,
            )
            await insert_audit(conn, _audit(organization_id, actor, "draft.approve", decision))
    except DraftError as exc:
        await _audit_refusal(conn, organization_id, actor, "draft.approve", name, exc)
        raise
    return decision


async def reject_draft(
    conn: asyncpg.Connection, *, organization_id: uuid.UUID, name: str, actor: str
) -> Decision:
    try:
        async with conn.transaction():
            draft = await lock_pending_draft(conn, organization_id, name)
            if draft is None:
                raise _not_found(name)
            await update_draft_decided(conn, organization_id, draft.id, DraftStatus.REJECTED, actor)
            installed = await fetch_org_pointed_version(conn, organization_id, name)
            installed_id = None if installed is None else installed.version_id
            decision = Decision(name, draft.id, DraftStatus.REJECTED, installed_id, installed_id)
            await insert_audit(
                conn,
                _audit(organization_id, actor, "draft.reject", decision, draft.version.version_id),
            )
    except DraftError as exc:
        await _audit_refusal(conn, organization_id, actor, "draft.reject", name, exc)
        raise
    return decision


async def set_agent_authoring(
    conn: asyncpg.Connection, *, organization_id: uuid.UUID, mode: AuthoringMode, actor: str
) -> AuthoringMode:
    """Change the org's mode (audited); returns the mode it replaced."""
    async with conn.transaction():
        previous = await update_agent_authoring(conn, organization_id, mode)
        if previous is None:
            raise DraftError(
                f"A organização {organization_id} não existe.", code="organization_not_found"
            )
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                "settings.agent_authoring",
                detail={"from": previous.value, "to": mode.value},
            ),
        )
    return previous


def _not_found(name: str) -> DraftError:
    return DraftError(f"Não há rascunho pendente da skill {name}.", code="draft_not_found")


def _audit(
    organization_id: uuid.UUID,
    actor: str,
    action: str,
    decision: Decision,
    draft_version_id: uuid.UUID | None = None,
) -> AuditEntry:
    detail: dict[str, object] = {"draft_id": str(decision.draft_id)}
    if draft_version_id is not None:
        detail["draft_version_id"] = str(draft_version_id)
    if decision.reactivated_from is not None:
        detail["reactivated_from"] = decision.reactivated_from
    return AuditEntry(
        organization_id,
        actor,
        action,
        skill_name=decision.name,
        before_version_id=decision.before_version_id,
        after_version_id=decision.after_version_id,
        detail=detail,
    )


async def _audit_refusal(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    actor: str,
    action: str,
    name: str,
    exc: SkilletError,
) -> None:
    if exc.code == "organization_not_found":
        return  # nothing to hang the row on
    async with conn.transaction():
        await insert_audit(
            conn,
            AuditEntry(
                organization_id,
                actor,
                action,
                outcome="refused",
                skill_name=name,
                detail={"code": exc.code},
            ),
        )
