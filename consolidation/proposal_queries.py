"""SQL of distillation proposals: members, expiry, decisions and the absorbed skills' archive.
The caller owns the transaction; the org comes from the caller."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from skills.catalog_queries import VERSION_COLUMNS, PointedVersion, pointed_version_of

LIST_PENDING_MEMBER_NAMES = """
select name from skill_proposal_members where organization_id = $1 and pending
"""


async def list_pending_member_names(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> set[str]:
    return {r["name"] for r in await conn.fetch(LIST_PENDING_MEMBER_NAMES, organization_id)}


# A pending proposal expires once it waited $2 seconds (the database's clock, which stamped
# it) or any member's pointer moved off the version it was made from (an edit, an
# uninstall). Returns how many expired.
EXPIRE_PROPOSALS = """
with due as (
    select s.id,
           case when s.created_at <= now() - make_interval(secs => $2) then 'waited'
                else 'member_changed' end as reason
    from skill_proposals s
    where s.organization_id = $1 and s.status = 'pending'
      and (s.created_at <= now() - make_interval(secs => $2) or exists (
          select 1 from skill_proposal_members m
          left join skill_pointers p on p.organization_id = m.organization_id and p.name = m.name
          where m.proposal_id = s.id and p.version_id is distinct from m.version_id))
    for update of s
), expired as (
    update skill_proposals s set status = 'expired', decided_at = now(),
                                 expired_reason = due.reason
    from due where s.id = due.id
    returning s.id
), released as (
    update skill_proposal_members m set pending = false
    from expired e where m.proposal_id = e.id
)
select count(*) from expired
"""


async def expire_proposals(
    conn: asyncpg.Connection, organization_id: uuid.UUID, max_age_s: float
) -> int:
    return int(await conn.fetchval(EXPIRE_PROPOSALS, organization_id, max_age_s))


@dataclass(frozen=True)
class Member:
    name: str
    role: str  # 'umbrella' | 'absorbed'
    version_id: uuid.UUID
    uses_30d: int
    score: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "role": self.role,
            "version_id": str(self.version_id),
            "uses_30d": self.uses_30d,
            "score": None if self.score is None else round(self.score, 4),
        }


@dataclass(frozen=True)
class Proposal:
    id: uuid.UUID
    umbrella: str
    version_id: uuid.UUID
    backend: str
    status: str
    index_bytes_before: int
    index_bytes_after: int
    created_at: datetime
    decided_at: datetime | None
    decided_by: str | None
    expired_reason: str | None
    members: tuple[Member, ...]
    # Which body it carries: 'model', 'kept_deterministic' or 'rejected: <reason>'.
    rewrite: str = "kept_deterministic"

    @property
    def absorbs(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members if m.role == "absorbed")

    @property
    def umbrella_member(self) -> Member:
        return next(m for m in self.members if m.role == "umbrella")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "umbrella": self.umbrella,
            "absorbs": list(self.absorbs),
            "status": self.status,
            "version_id": str(self.version_id),
            "backend": self.backend,
            "index_bytes_before": self.index_bytes_before,
            "index_bytes_after": self.index_bytes_after,
            "created_at": self.created_at.isoformat(),
            "decided_at": None if self.decided_at is None else self.decided_at.isoformat(),
            "decided_by": self.decided_by,
            "expired_reason": self.expired_reason,
            "rewrite": self.rewrite,
            "members": [m.to_json() for m in self.members],
        }


INSERT_PROPOSAL = """
insert into skill_proposals (id, organization_id, umbrella, version_id, backend,
                             index_bytes_before, index_bytes_after, rewrite)
values ($1, $2, $3, $4, $5, $6, $7, $8)
"""
INSERT_MEMBERS = """
insert into skill_proposal_members (proposal_id, organization_id, name, role, version_id,
                                    uses_30d, score)
select $1, $2, * from unnest($3::text[], $4::text[], $5::uuid[], $6::bigint[], $7::real[])
"""


async def insert_proposal(
    conn: asyncpg.Connection, organization_id: uuid.UUID, proposal: Proposal
) -> None:
    await conn.execute(
        INSERT_PROPOSAL,
        proposal.id,
        organization_id,
        proposal.umbrella,
        proposal.version_id,
        proposal.backend,
        proposal.index_bytes_before,
        proposal.index_bytes_after,
        proposal.rewrite,
    )
    members = proposal.members
    await conn.execute(
        INSERT_MEMBERS,
        proposal.id,
        organization_id,
        [m.name for m in members],
        [m.role for m in members],
        [m.version_id for m in members],
        [m.uses_30d for m in members],
        [m.score for m in members],
    )


_PROPOSAL_COLUMNS = """
s.id, s.umbrella, s.version_id, s.backend, s.status, s.index_bytes_before,
s.index_bytes_after, s.created_at, s.decided_at, s.decided_by, s.expired_reason, s.rewrite,
(select json_agg(json_build_object('name', m.name, 'role', m.role,
                                   'version_id', m.version_id, 'uses_30d', m.uses_30d,
                                   'score', m.score)
                 order by m.role desc, m.score desc nulls first, m.name collate "C")
 from skill_proposal_members m where m.proposal_id = s.id)::text as members
"""


def _proposal(row: asyncpg.Record) -> Proposal:
    members = tuple(
        Member(
            m["name"],
            m["role"],
            uuid.UUID(m["version_id"]),
            int(m["uses_30d"]),
            None if m["score"] is None else float(m["score"]),
        )
        for m in json.loads(row["members"] or "[]")
    )
    fields = {k: row[k] for k in Proposal.__dataclass_fields__ if k != "members"}
    return Proposal(**fields, members=members)


LIST_PROPOSALS = f"""
select {_PROPOSAL_COLUMNS} from skill_proposals s
where s.organization_id = $1 and ($2::text is null or s.status = $2)
order by s.created_at desc, s.id limit $3
"""


async def list_proposals(
    conn: asyncpg.Connection, organization_id: uuid.UUID, status: str | None, limit: int = 100
) -> list[Proposal]:
    rows = await conn.fetch(LIST_PROPOSALS, organization_id, status, limit)
    return [_proposal(r) for r in rows]


FETCH_PROPOSAL = f"""
select {_PROPOSAL_COLUMNS} from skill_proposals s where s.organization_id = $1 and s.id = $2
"""
LOCK_PROPOSAL = "select 1 from skill_proposals where organization_id = $1 and id = $2 for update"


async def fetch_proposal(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    proposal_id: uuid.UUID,
    *,
    lock: bool = False,
) -> Proposal | None:
    """One proposal with its members; `lock`: its row locked until the transaction ends."""
    if lock:
        await conn.execute(LOCK_PROPOSAL, organization_id, proposal_id)
    row = await conn.fetchrow(FETCH_PROPOSAL, organization_id, proposal_id)
    return None if row is None else _proposal(row)


FETCH_PROPOSED_VERSION = f"select {VERSION_COLUMNS} from skill_versions v where v.id = $1"


async def fetch_version(conn: asyncpg.Connection, version_id: uuid.UUID) -> PointedVersion | None:
    row = await conn.fetchrow(FETCH_PROPOSED_VERSION, version_id)
    return None if row is None else pointed_version_of(row)


UPDATE_PROPOSAL_DECIDED = """
with decided as (
    update skill_proposals set status = $3, decided_at = now(), decided_by = $4,
                               expired_reason = $5
    where organization_id = $1 and id = $2 and status = 'pending'
    returning id
)
update skill_proposal_members m set pending = false from decided d where m.proposal_id = d.id
"""


async def update_proposal_decided(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    proposal_id: uuid.UUID,
    status: str,
    actor: str | None,
    reason: str | None = None,
) -> None:
    await conn.execute(UPDATE_PROPOSAL_DECIDED, organization_id, proposal_id, status, actor, reason)


# Absorbed skills: archived (the loader, matcher and index drop them), with their umbrella.
ARCHIVE_ABSORBED = """
insert into skill_usage as u (organization_id, skill_name, created_by, state, archived_at,
                              absorbed_into)
select $1, n, 'agent', 'archived', $3, $4 from unnest($2::text[]) as n
on conflict (organization_id, skill_name) do update set
    state = 'archived', archived_at = excluded.archived_at, absorbed_into = excluded.absorbed_into
"""


async def archive_absorbed(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    names: Sequence[str],
    umbrella: str,
    at: datetime,
) -> None:
    await conn.execute(ARCHIVE_ABSORBED, organization_id, list(names), at, umbrella)
