"""SQL of the catalog operations: pointed versions, insert-only pointers, listings, the lock.

Every query takes the organization id from the caller (trusted: CLI flag or job row) and
filters on it; platform rows are `organization_id is null` and have queries of their own.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from skills.models import DEFAULT_FRONTMATTER, ManifestEntry, SkillFrontmatter, SkillMatcher

VERSION_COLUMNS = """
v.id, v.name, v.description, v.body, v.matcher, v.manifest, v.content_sha256, v.created_by,
v.forked_from_version_id, v.frontmatter, v.skill_md
"""


@dataclass(frozen=True)
class PointedVersion:
    """The version a pointer names, with what import/install compare and copy."""

    version_id: uuid.UUID
    name: str
    description: str
    body: str
    matcher: SkillMatcher
    manifest: tuple[ManifestEntry, ...]
    content_sha256: str | None
    created_by: str
    forked_from_version_id: uuid.UUID | None
    frontmatter: SkillFrontmatter = DEFAULT_FRONTMATTER
    # As uploaded (None: a version stored before skill_versions kept skill_md).
    skill_md: bytes | None = field(default=None, repr=False)


def pointed_version_of(row: asyncpg.Record) -> PointedVersion:
    manifest: Any = row["manifest"] or []
    return PointedVersion(
        version_id=row["id"],
        name=row["name"],
        description=row["description"],
        body=row["body"],
        matcher=SkillMatcher.from_json(row["matcher"]),
        manifest=tuple(ManifestEntry.from_json(e) for e in manifest),
        content_sha256=row["content_sha256"],
        created_by=row["created_by"],
        forked_from_version_id=row["forked_from_version_id"],
        frontmatter=SkillFrontmatter.from_json(row["frontmatter"]),
        skill_md=None if row["skill_md"] is None else bytes(row["skill_md"]),
    )


FETCH_ORG_POINTED_VERSION = f"""
select {VERSION_COLUMNS}
from skill_pointers p join skill_versions v on v.id = p.version_id
where p.organization_id = $1 and p.name = $2
"""


async def fetch_org_pointed_version(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> PointedVersion | None:
    """The org's installed version of `name` (archived or not), or None if not installed."""
    row = await conn.fetchrow(FETCH_ORG_POINTED_VERSION, organization_id, name)
    return None if row is None else pointed_version_of(row)


FETCH_PLATFORM_POINTED_VERSION = f"""
select {VERSION_COLUMNS}
from skill_pointers p join skill_versions v on v.id = p.version_id
where p.organization_id is null and p.name = $1
"""


async def fetch_platform_pointed_version(
    conn: asyncpg.Connection, name: str
) -> PointedVersion | None:
    """The catalog's current version of `name`, or None if the catalog has no such skill."""
    row = await conn.fetchrow(FETCH_PLATFORM_POINTED_VERSION, name)
    return None if row is None else pointed_version_of(row)


FETCH_ORGANIZATION_EXISTS = "select exists (select 1 from organizations where id = $1)"


async def fetch_organization_exists(conn: asyncpg.Connection, organization_id: uuid.UUID) -> bool:
    return bool(await conn.fetchval(FETCH_ORGANIZATION_EXISTS, organization_id))


INSERT_SKILL_POINTER = """
insert into skill_pointers (organization_id, name, version_id, updated_at)
values ($1, $2, $3, now())
on conflict on constraint skill_pointers_org_name_key do nothing
"""


async def insert_skill_pointer(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, version_id: uuid.UUID
) -> bool:
    """Install only if the org has no `name` yet; False (nothing written) if it already has."""
    status: str = await conn.execute(INSERT_SKILL_POINTER, organization_id, name, version_id)
    return status.endswith(" 1")


@dataclass(frozen=True)
class OrgSkillRow:
    name: str
    description: str
    version_id: uuid.UUID
    created_by: str
    forked_from_version_id: uuid.UUID | None
    updated_at: datetime
    state: str
    absorbed_into: str | None = None


LIST_ORG_SKILLS = """
select p.name, v.description, v.id, v.created_by, v.forked_from_version_id, p.updated_at,
       coalesce(u.state, 'active') as state,
       case when u.state = 'archived' then u.absorbed_into end as absorbed_into
from skill_pointers p
join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = $1
order by p.name collate "C"
"""


async def list_org_skills(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> list[OrgSkillRow]:
    """Every pointer of the org (archived ones too, with their state), sorted by name."""
    rows = await conn.fetch(LIST_ORG_SKILLS, organization_id)
    return [
        OrgSkillRow(
            name=r["name"],
            description=r["description"],
            version_id=r["id"],
            created_by=r["created_by"],
            forked_from_version_id=r["forked_from_version_id"],
            updated_at=r["updated_at"],
            state=r["state"],
            absorbed_into=r["absorbed_into"],
        )
        for r in rows
    ]


@dataclass(frozen=True)
class CatalogSkillRow:
    name: str
    description: str


LIST_CATALOG_SKILLS_NOT_INSTALLED = """
select p.name, v.description
from skill_pointers p
join skill_versions v on v.id = p.version_id
where p.organization_id is null
  and not exists (
      select 1 from skill_pointers mine
      where mine.organization_id = $1 and mine.name = p.name
  )
order by p.name collate "C"
"""


async def list_catalog_skills_not_installed(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> list[CatalogSkillRow]:
    """Platform skills whose name the org has no pointer for, sorted by name."""
    rows = await conn.fetch(LIST_CATALOG_SKILLS_NOT_INSTALLED, organization_id)
    return [CatalogSkillRow(name=r["name"], description=r["description"]) for r in rows]


LIST_CATALOG_SKILL_NAMES = """
select name from skill_pointers where organization_id is null order by name collate "C"
"""


async def list_catalog_skill_names(conn: asyncpg.Connection) -> list[str]:
    return [r["name"] for r in await conn.fetch(LIST_CATALOG_SKILL_NAMES)]


def catalog_lock_key(organization_id: uuid.UUID | None) -> int:
    """The advisory-lock key (signed int64) serializing catalog writes of one owner."""
    owner = "platform" if organization_id is None else str(organization_id)
    digest = hashlib.blake2b(f"skillet.skills:{owner}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


LOCK_SKILL_CATALOG = "select pg_advisory_lock($1)"


async def lock_skill_catalog(conn: asyncpg.Connection, organization_id: uuid.UUID | None) -> None:
    """Wait for the owner's session-level catalog lock; the caller must unlock it."""
    await conn.execute(LOCK_SKILL_CATALOG, catalog_lock_key(organization_id))


UNLOCK_SKILL_CATALOG = "select pg_advisory_unlock($1)"


async def unlock_skill_catalog(conn: asyncpg.Connection, organization_id: uuid.UUID | None) -> None:
    await conn.execute(UNLOCK_SKILL_CATALOG, catalog_lock_key(organization_id))
