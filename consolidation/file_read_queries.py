"""SQL of per-file reads (skill_file_reads): read by the console, carried by an approved merge.
The reply's commit writes them (skillet_bump_file_reads)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


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


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill's installed version, with its reads (None: never read)."""

    path: str
    reads: FileReads | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "read_count": 0 if self.reads is None else self.reads.read_count,
            "last_read_at": None if self.reads is None else self.reads.last_read_at.isoformat(),
        }


# Each installed version's files (its manifest), with the reads counted for each path.
LIST_SKILL_FILES = """
select p.name, e.entry ->> 'path' as path, r.read_count, r.last_read_at
from skill_pointers p
join skill_versions v on v.id = p.version_id
cross join lateral jsonb_array_elements(v.manifest) as e(entry)
left join skill_file_reads r on r.organization_id = p.organization_id
    and r.skill_name = p.name and r.path = e.entry ->> 'path'
where p.organization_id = $1 and p.name = any($2::text[])
order by p.name collate "C", e.entry ->> 'path' collate "C"
"""


async def list_skill_files(
    conn: asyncpg.Connection, organization_id: uuid.UUID, names: Sequence[str]
) -> dict[str, list[SkillFile]]:
    """Skill name -> its installed version's files by path (skills without files absent)."""
    out: dict[str, list[SkillFile]] = {}
    for r in await conn.fetch(LIST_SKILL_FILES, organization_id, list(names)):
        reads = None
        if r["read_count"] is not None:
            reads = FileReads(int(r["read_count"]), r["last_read_at"])
        out.setdefault(r["name"], []).append(SkillFile(r["path"], reads))
    return out
