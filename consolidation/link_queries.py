"""SQL of consolidation's links: the overlay of similar pairs (skill_links) and each skill's
neighbours. The caller owns the transaction; the org comes from the caller."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg


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


# Each named skill's linked neighbours that are installed and not archived, best first, as
# measured by one backend (the one in use).
LIST_NEIGHBOURS = """
select l.name, l.other, l.score, l.backend, p.version_id
from (select a as name, b as other, score, backend from skill_links
      where organization_id = $1 and backend = $3
      union all
      select b, a, score, backend from skill_links
      where organization_id = $1 and backend = $3) as l
join skill_pointers p on p.organization_id = $1 and p.name = l.other
left join skill_usage u on u.organization_id = $1 and u.skill_name = l.other
where l.name = any($2::text[]) and coalesce(u.state, 'active') <> 'archived'
order by l.name collate "C", l.score desc, l.other collate "C"
"""


async def list_neighbours(
    conn: asyncpg.Connection, organization_id: uuid.UUID, names: Sequence[str], backend: str
) -> dict[str, list[dict[str, Any]]]:
    """name -> [{"name", "version_id", "score", "backend"}] (skills without links are absent);
    `version_id` is the neighbour's installed version."""
    found: dict[str, list[dict[str, Any]]] = {}
    for r in await conn.fetch(LIST_NEIGHBOURS, organization_id, list(names), backend):
        found.setdefault(r["name"], []).append(
            {
                "name": r["other"],
                "version_id": str(r["version_id"]),
                "score": round(float(r["score"]), 2),
                "backend": r["backend"],
            }
        )
    return found
