"""SQL of the audit log: who changed what an org's agent knows or may do, and what was refused."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True)
class AuditEntry:
    organization_id: uuid.UUID
    actor: str  # 'cli', or an API key's prefix
    action: str  # dotted: 'draft.approve', 'settings.agent_authoring', ...
    outcome: str = "ok"  # 'ok' | 'refused'
    skill_name: str | None = None
    before_version_id: uuid.UUID | None = None
    after_version_id: uuid.UUID | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditRow:
    id: int
    entry: AuditEntry
    created_at: datetime


INSERT_AUDIT = """
insert into audit_log (organization_id, actor, action, outcome, skill_name,
                       before_version_id, after_version_id, detail)
values ($1, $2, $3, $4, $5, $6, $7, $8)
returning id
"""


async def insert_audit(conn: asyncpg.Connection, entry: AuditEntry) -> int:
    """Write in the caller's transaction, so the row stands or falls with the change."""
    value = await conn.fetchval(
        INSERT_AUDIT,
        entry.organization_id,
        entry.actor,
        entry.action,
        entry.outcome,
        entry.skill_name,
        entry.before_version_id,
        entry.after_version_id,
        entry.detail,
    )
    return int(value)


LIST_AUDIT = """
select id, organization_id, actor, action, outcome, skill_name, before_version_id,
       after_version_id, detail, created_at
from audit_log
where organization_id = $1 and ($2::bigint is null or id < $2)
order by id desc
limit $3
"""


async def list_audit(
    conn: asyncpg.Connection, organization_id: uuid.UUID, *, limit: int, before_id: int | None
) -> list[AuditRow]:
    """Newest first; `before_id` (the last id seen) pages on."""
    rows = await conn.fetch(LIST_AUDIT, organization_id, before_id, limit)
    return [
        AuditRow(
            id=r["id"],
            entry=AuditEntry(
                organization_id=r["organization_id"],
                actor=r["actor"],
                action=r["action"],
                outcome=r["outcome"],
                skill_name=r["skill_name"],
                before_version_id=r["before_version_id"],
                after_version_id=r["after_version_id"],
                detail=dict(r["detail"] or {}),
            ),
            created_at=r["created_at"],
        )
        for r in rows
    ]
