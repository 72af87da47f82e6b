"""SQL of the API's skill reads: the org's installed skills with state, pin and source, and
its daily activation counts (`skill_activation_daily`, kept by each reply's commit)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime

import asyncpg


@dataclass(frozen=True)
class InstalledRow:
    name: str
    description: str
    version_id: uuid.UUID
    created_by: str
    forked_from_version_id: uuid.UUID | None
    updated_at: datetime
    state: str
    pinned: bool
    absorbed_into: str | None  # archived into this umbrella by a distillation


LIST_INSTALLED_PAGE = """
select p.name, v.description, v.id as version_id, v.created_by, v.forked_from_version_id,
       p.updated_at, coalesce(u.state, 'active') as state, coalesce(u.pinned, false) as pinned,
       case when u.state = 'archived' then u.absorbed_into end as absorbed_into
from skill_pointers p
join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = $1 and ($2::text is null or p.name collate "C" > $2)
order by p.name collate "C"
limit $3
"""


async def list_installed_page(
    conn: asyncpg.Connection, organization_id: uuid.UUID, *, after: str | None, limit: int
) -> list[InstalledRow]:
    """Every pointer of the org (archived too), by name; `after` the last name seen."""
    rows = await conn.fetch(LIST_INSTALLED_PAGE, organization_id, after, limit)
    return [InstalledRow(**dict(r)) for r in rows]


@dataclass(frozen=True)
class ActivationDay:
    day: date
    hard: int
    probe: int
    intent: int


LIST_ACTIVATION_DAYS = """
select day, hard_count, probe_count, intent_count from skill_activation_daily
where organization_id = $1 and skill_name = $2 and day > $3::date - $4::int and day <= $3
order by day
"""


async def list_activation_days(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, today: date, days: int
) -> list[ActivationDay]:
    """Counts of the `days` UTC days ending `today` (days without a row are absent)."""
    rows = await conn.fetch(LIST_ACTIVATION_DAYS, organization_id, name, today, days)
    return [
        ActivationDay(r["day"], int(r["hard_count"]), int(r["probe_count"]), int(r["intent_count"]))
        for r in rows
    ]


@dataclass(frozen=True)
class ActivationTotals:
    hard: int  # injected: its keywords matched
    probe: int  # probe keywords matched without a hard match: demand no skill serves
    capped: int  # matched, but cut by the injection cap
    intent: int  # injected: only its catalog intent model matched


LIST_ACTIVATION_TOTALS = """
select skill_name, sum(hard_count) as hard, sum(probe_count) as probe,
       sum(capped_count) as capped, sum(intent_count) as intent
from skill_activation_daily
where organization_id = $1 and skill_name = any($2::text[])
  and day > $3::date - $4::int and day <= $3
group by skill_name
"""


async def list_activation_totals(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    names: list[str],
    today: date,
    days: int,
) -> dict[str, ActivationTotals]:
    """Sums of the `days` UTC days ending `today`, by skill; skills without a row are absent."""
    rows = await conn.fetch(LIST_ACTIVATION_TOTALS, organization_id, names, today, days)
    return {
        r["skill_name"]: ActivationTotals(
            int(r["hard"]), int(r["probe"]), int(r["capped"]), int(r["intent"])
        )
        for r in rows
    }


# Negative reactions (inbox.reactions) of the `days` UTC days ending `today` to agent replies
# whose turn used the skill (messages.skills), by skill: the latest per customer and message.
LIST_NEGATIVE_REACTIONS = """
select s.name as skill_name, count(*) as negative
from message_reactions r
join messages m on m.id = r.target_id and m.direction = 'outbound'
cross join lateral jsonb_to_recordset(coalesce(m.skills, '[]'::jsonb)) as s(name text)
where r.organization_id = $1 and r.negative
  and (r.reacted_at at time zone 'UTC')::date > $3::date - $4::int
  and (r.reacted_at at time zone 'UTC')::date <= $3
  and s.name = any($2::text[])
group by s.name
"""


async def list_negative_reactions(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    names: list[str],
    today: date,
    days: int,
) -> dict[str, int]:
    """Per skill, customers' negative reactions to the agent replies that used it; skills
    without any are absent. Information for the business only: nothing else reads it."""
    rows = await conn.fetch(LIST_NEGATIVE_REACTIONS, organization_id, names, today, days)
    return {r["skill_name"]: int(r["negative"]) for r in rows}
