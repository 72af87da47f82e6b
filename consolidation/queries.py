"""SQL of consolidation's cycle: the opt-in, the watermark, the skills a cycle reads, its report.
Links, proposals and file reads have modules of their own (link_, proposal_, file_read_queries).

Every query takes the org from the caller (trusted: the tick's bound org, a CLI flag, the
API key's org) and filters on it; row-level security holds it to the bound org anyway. The
caller owns the transaction.
"""

from __future__ import annotations

import uuid
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


# The org's agent (its first, as the turn answers numbers that name none) and its model.
FETCH_AGENT_MODEL = """
select model_provider, model_name from agents
where organization_id = $1 order by created_at, id limit 1
"""


async def fetch_agent_model(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> tuple[str | None, str | None] | None:
    """(model_provider, model_name) of the org's agent; None when it has no agent."""
    row = await conn.fetchrow(FETCH_AGENT_MODEL, organization_id)
    return None if row is None else (row["model_provider"], row["model_name"])
