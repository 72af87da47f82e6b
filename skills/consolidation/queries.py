"""SQL of consolidation: the opt-in, the watermark, the skills a cycle reads, links, proposals.

Every query takes the org from the caller (trusted: the tick's bound org, a CLI flag, the
API key's org) and filters on it; row-level security holds it to the bound org anyway. The
caller owns the transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import asyncpg

from skills.catalog_queries import VERSION_COLUMNS, PointedVersion, pointed_version_of

USES_WINDOW_DAYS = 30
# Installed skills one cycle reads: bounds its memory and CPU (the lexical backend on 1,000
# near-identical skills took ~9 s on a busy 2-core machine; 300 ordinary ones, 0.5 s).
MAX_CYCLE_SKILLS = 1_000

FETCH_CONSOLIDATION_MODE = "select consolidation from organizations where id = $1"


async def fetch_consolidation_mode(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> str | None:
    """The org's opt-in ('off' or 'review'); None when the org does not exist."""
    mode: str | None = await conn.fetchval(FETCH_CONSOLIDATION_MODE, organization_id)
    return mode


UPDATE_CONSOLIDATION_MODE = """
with previous as (select consolidation from organizations where id = $1 for update)
update organizations o set consolidation = $2 from previous where o.id = $1
returning previous.consolidation
"""


async def update_consolidation_mode(
    conn: asyncpg.Connection, organization_id: uuid.UUID, mode: str
) -> str | None:
    """Set the opt-in; the mode it replaced, or None when the org does not exist."""
    previous: str | None = await conn.fetchval(UPDATE_CONSOLIDATION_MODE, organization_id, mode)
    return previous


@dataclass(frozen=True)
class CycleSkill:
    """An installed skill as a cycle reads it."""

    version: PointedVersion
    state: str
    pinned: bool
    last_activity_at: datetime | None
    uses_30d: int
    absorbed_into: str | None


LIST_CYCLE_SKILLS = f"""
select {VERSION_COLUMNS}, coalesce(u.state, 'active') as state,
       coalesce(u.pinned, false) as pinned, u.last_activity_at, u.absorbed_into,
       coalesce((select sum(d.hard_count + d.intent_count) from skill_activation_daily d
                 where d.organization_id = p.organization_id and d.skill_name = p.name
                   and d.day > $2::date - {USES_WINDOW_DAYS} and d.day <= $2::date), 0)
           as uses_30d
from skill_pointers p
join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = $1 and coalesce(u.state, 'active') <> 'archived'
order by p.name collate "C"
limit {MAX_CYCLE_SKILLS}
"""


async def list_cycle_skills(
    conn: asyncpg.Connection, organization_id: uuid.UUID, today: date
) -> list[CycleSkill]:
    """The org's non-archived skills (at most MAX_CYCLE_SKILLS, by name), with 30-day uses
    ending `today`."""
    rows = await conn.fetch(LIST_CYCLE_SKILLS, organization_id, today)
    return [
        CycleSkill(
            version=pointed_version_of(r),
            state=r["state"],
            pinned=r["pinned"],
            last_activity_at=r["last_activity_at"],
            uses_30d=int(r["uses_30d"]),
            absorbed_into=r["absorbed_into"],
        )
        for r in rows
    ]


# Proposal versions are the cycle's own writes, not the agent's: they move no watermark.
FETCH_LAST_AGENT_CHANGE = """
select max(v.created_at) from skill_versions v
where v.organization_id = $1 and v.created_by = 'agent'
  and not exists (select 1 from skill_proposals s
                  where s.organization_id = $1 and s.version_id = v.id)
"""


async def fetch_last_agent_change(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> datetime | None:
    at: datetime | None = await conn.fetchval(FETCH_LAST_AGENT_CHANGE, organization_id)
    return at


FETCH_CONSOLIDATED_AT = "select consolidated_at from org_consolidation where organization_id = $1"


async def fetch_consolidated_at(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> datetime | None:
    at: datetime | None = await conn.fetchval(FETCH_CONSOLIDATED_AT, organization_id)
    return at


# The watermark is the database's clock, like the versions' created_at it is compared with.
UPSERT_ORG_CONSOLIDATION = """
insert into org_consolidation (organization_id, consolidated_at, report)
values ($1, clock_timestamp(), $2)
on conflict (organization_id) do update
set consolidated_at = excluded.consolidated_at, report = excluded.report
"""


async def upsert_org_consolidation(
    conn: asyncpg.Connection, organization_id: uuid.UUID, report: dict[str, Any]
) -> None:
    """Move the watermark to now and keep the report."""
    await conn.execute(UPSERT_ORG_CONSOLIDATION, organization_id, report)


# The org's newest curator run says what consolidation did after it (or why it skipped).
UPDATE_CURATOR_RUN_CONSOLIDATION = """
update curator_runs set consolidation = $2
where id = (select max(id) from curator_runs where organization_id = $1)
"""


async def update_curator_run_consolidation(
    conn: asyncpg.Connection, organization_id: uuid.UUID, report: dict[str, Any]
) -> None:
    await conn.execute(UPDATE_CURATOR_RUN_CONSOLIDATION, organization_id, report)


@dataclass(frozen=True)
class StoredLink:
    a: str
    b: str
    a_version_id: uuid.UUID
    b_version_id: uuid.UUID
    score: float
    backend: str


LIST_LINKS = """
select a, b, a_version_id, b_version_id, score, backend from skill_links
where organization_id = $1 order by a collate "C", b collate "C", backend
"""


async def list_links(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[StoredLink]:
    rows = await conn.fetch(LIST_LINKS, organization_id)
    return [StoredLink(**dict(r)) for r in rows]


UPSERT_LINKS = """
insert into skill_links (organization_id, a, b, a_version_id, b_version_id, score, backend)
select $1, * from unnest($2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::real[], $7::text[])
on conflict (organization_id, backend, a, b) do update set
    a_version_id = excluded.a_version_id, b_version_id = excluded.b_version_id,
    score = excluded.score, updated_at = now()
"""


async def upsert_links(
    conn: asyncpg.Connection, organization_id: uuid.UUID, links: Sequence[StoredLink]
) -> None:
    if links:
        await conn.execute(
            UPSERT_LINKS,
            organization_id,
            [x.a for x in links],
            [x.b for x in links],
            [x.a_version_id for x in links],
            [x.b_version_id for x in links],
            [x.score for x in links],
            [x.backend for x in links],
        )


DELETE_LINKS = """
delete from skill_links l using unnest($2::text[], $3::text[], $4::text[]) as g(a, b, backend)
where l.organization_id = $1 and l.a = g.a and l.b = g.b and l.backend = g.backend
"""


async def delete_links(
    conn: asyncpg.Connection, organization_id: uuid.UUID, links: Sequence[StoredLink]
) -> None:
    """Links recomputed below the threshold (a member's new version drifted apart)."""
    if links:
        await conn.execute(
            DELETE_LINKS,
            organization_id,
            [x.a for x in links],
            [x.b for x in links],
            [x.backend for x in links],
        )


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
            "members": [m.to_json() for m in self.members],
        }


INSERT_PROPOSAL = """
insert into skill_proposals (id, organization_id, umbrella, version_id, backend,
                             index_bytes_before, index_bytes_after)
values ($1, $2, $3, $4, $5, $6, $7)
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
s.index_bytes_after, s.created_at, s.decided_at, s.decided_by, s.expired_reason,
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


# Each named skill's linked neighbours that are installed and not archived, best first.
LIST_NEIGHBOURS = """
select l.name, l.other, l.score, l.backend
from (select a as name, b as other, score, backend from skill_links where organization_id = $1
      union all
      select b, a, score, backend from skill_links where organization_id = $1) as l
join skill_pointers p on p.organization_id = $1 and p.name = l.other
left join skill_usage u on u.organization_id = $1 and u.skill_name = l.other
where l.name = any($2::text[]) and coalesce(u.state, 'active') <> 'archived'
order by l.name collate "C", l.score desc, l.other collate "C"
"""


async def list_neighbours(
    conn: asyncpg.Connection, organization_id: uuid.UUID, names: Sequence[str]
) -> dict[str, list[dict[str, Any]]]:
    """name -> [{"name", "score", "backend"}] (skills without links are absent)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for r in await conn.fetch(LIST_NEIGHBOURS, organization_id, list(names)):
        found.setdefault(r["name"], []).append(
            {"name": r["other"], "score": round(float(r["score"]), 2), "backend": r["backend"]}
        )
    return found


@dataclass(frozen=True)
class FileReads:
    read_count: int
    last_read_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {"read_count": self.read_count, "last_read_at": self.last_read_at.isoformat()}


LIST_FILE_READS = """
select skill_name, path, read_count, last_read_at from skill_file_reads
where organization_id = $1 and skill_name = any($2::text[])
"""


async def list_file_reads(
    conn: asyncpg.Connection, organization_id: uuid.UUID, names: Sequence[str]
) -> dict[tuple[str, str], FileReads]:
    """(skill, path) -> its read_skill_reference reads (files never read are absent)."""
    rows = await conn.fetch(LIST_FILE_READS, organization_id, list(names))
    return {
        (r["skill_name"], r["path"]): FileReads(int(r["read_count"]), r["last_read_at"])
        for r in rows
    }


# An approved merge: each moved file's reads follow it to its path under the umbrella.
COPY_FILE_READS = """
insert into skill_file_reads as r (organization_id, skill_name, path, read_count, last_read_at)
select $1, $2, m.dest, f.read_count, f.last_read_at
from skill_file_reads f
join unnest($3::text[], $4::text[], $5::text[]) as m(skill, source, dest)
  on f.skill_name = m.skill and f.path = m.source
where f.organization_id = $1
order by m.dest
on conflict (organization_id, skill_name, path) do update
set read_count = r.read_count + excluded.read_count,
    last_read_at = greatest(r.last_read_at, excluded.last_read_at)
"""


async def copy_file_reads(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    umbrella: str,
    moves: Sequence[tuple[str, str, str]],
) -> None:
    """`moves`: (absorbed skill, its path, the path under `umbrella`)."""
    if moves:
        await conn.execute(
            COPY_FILE_READS,
            organization_id,
            umbrella,
            [m[0] for m in moves],
            [m[1] for m in moves],
            [m[2] for m in moves],
        )
