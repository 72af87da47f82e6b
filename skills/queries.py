"""SQL of the skill catalog: versions, pointers, the installed-set loader, revisions."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from skills.models import (
    DEFAULT_FRONTMATTER,
    CreatedVia,
    LoadedSkill,
    ManifestEntry,
    SkillFrontmatter,
    SkillMatcher,
    VersionAuthor,
    default_created_via,
)

LIST_INSTALLED_SKILLS = """
select v.id, v.name, v.description, v.body, v.matcher, v.manifest, v.created_by
from skill_pointers p
join skill_versions v on v.id = p.version_id
left join skill_usage u on u.organization_id = p.organization_id and u.skill_name = p.name
where p.organization_id = $1 and coalesce(u.state, 'active') <> 'archived'
order by p.name collate "C"
"""


async def list_installed_skills(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> list[LoadedSkill]:
    """The org's installed, non-archived skills at their pointed versions, sorted by name."""
    rows = await conn.fetch(LIST_INSTALLED_SKILLS, organization_id)
    return [_loaded_skill(r) for r in rows]


def _loaded_skill(row: asyncpg.Record) -> LoadedSkill:
    manifest: Any = row["manifest"] or []
    return LoadedSkill(
        version_id=row["id"],
        name=row["name"],
        description=row["description"],
        body=row["body"],
        matcher=SkillMatcher.from_json(row["matcher"]),
        manifest=tuple(ManifestEntry.from_json(e) for e in manifest),
        created_by=row["created_by"],
    )


FETCH_CATALOG_REVISION = """
select revision from skill_catalog_revisions where organization_id = $1
"""


async def fetch_catalog_revision(conn: asyncpg.Connection, organization_id: uuid.UUID) -> int:
    """Counter bumped by triggers whenever what the org loads may have changed (0 = never)."""
    value = await conn.fetchval(FETCH_CATALOG_REVISION, organization_id)
    return int(value or 0)


INSERT_SKILL_VERSION = """
insert into skill_versions
    (id, organization_id, name, description, body, matcher, manifest,
     forked_from_version_id, created_by, content_sha256, frontmatter, skill_md,
     created_via, author_key_prefix, author_key_name, created_at)
values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
        coalesce($16::timestamptz, now()))
"""


async def insert_skill_version(
    conn: asyncpg.Connection,
    *,
    version_id: uuid.UUID,
    organization_id: uuid.UUID | None,
    name: str,
    description: str,
    body: str,
    matcher: SkillMatcher,
    manifest: Sequence[ManifestEntry] = (),
    created_by: str,
    forked_from_version_id: uuid.UUID | None = None,
    content_sha256: str | None = None,
    frontmatter: SkillFrontmatter = DEFAULT_FRONTMATTER,
    skill_md: bytes | None = None,
    created_via: str | None = None,
    author: VersionAuthor | None = None,
    created_at: datetime | None = None,
) -> None:
    """A new immutable version row (id chosen by the caller, who stored its files under it).

    `skill_md`: the SKILL.md bytes as uploaded (None when the version was not uploaded as a
    package: the agent's own skills are rendered from their fields). `created_via` (a
    CreatedVia value) defaults to what `created_by` and a fork say (default_created_via);
    `author`: the API key that made it, when one did. `created_at` defaults to the
    transaction's time."""
    via = created_via or default_created_via(created_by, forked_from_version_id)
    await conn.execute(
        INSERT_SKILL_VERSION,
        version_id,
        organization_id,
        name,
        description,
        body,
        matcher.to_json(),
        [e.to_json() for e in manifest],
        forked_from_version_id,
        created_by,
        content_sha256,
        frontmatter.to_json(),
        skill_md,
        str(CreatedVia(via)),
        None if author is None else author.key_prefix,
        None if author is None else author.key_name,
        created_at,
    )


UPSERT_SKILL_POINTER = """
insert into skill_pointers (organization_id, name, version_id, updated_at)
values ($1, $2, $3, now())
on conflict on constraint skill_pointers_org_name_key
do update set version_id = excluded.version_id, updated_at = now()
"""


async def upsert_skill_pointer(
    conn: asyncpg.Connection, organization_id: uuid.UUID | None, name: str, version_id: uuid.UUID
) -> None:
    """Install `version_id` as the org's `name` (or the catalog's, for organization_id None)."""
    await conn.execute(UPSERT_SKILL_POINTER, organization_id, name, version_id)


DELETE_SKILL_POINTER = """
delete from skill_pointers where organization_id = $1 and name = $2
"""


async def delete_skill_pointer(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str
) -> bool:
    """Uninstall: drop the org's pointer only; versions and objects stay."""
    status: str = await conn.execute(DELETE_SKILL_POINTER, organization_id, name)
    return status.endswith(" 1")
