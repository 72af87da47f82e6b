"""What an edit of the skill editor starts from (pure reads and copies, no decision): the
base version (the org's, or the catalog's for an edit that installs it), its files' bytes, the
SKILL.md a file change keeps, and the install's own row when a catalog skill is edited before
it is installed. skills.editing decides with these."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from core.object_store import ObjectStore, object_key
from skills.catalog_errors import SkillAlreadyInstalled, SkillNotInstalled
from skills.catalog_queries import (
    PointedVersion,
    fetch_org_pointed_version,
    fetch_platform_pointed_version,
)
from skills.editing_errors import SkillBaseMoved, SkillNameReserved
from skills.editing_queries import fetch_just_before_now
from skills.export.archive import render_spec_skill_md
from skills.models import CreatedVia, VersionAuthor
from skills.package.limits import PackageLimits
from skills.queries import insert_skill_version


@dataclass(frozen=True)
class EditBase:
    """What an edit starts from: `version` (the org's, or the catalog's for a fork; None for
    a new skill) and what the org's pointer must still name when it is moved."""

    version: PointedVersion | None
    pointer: uuid.UUID | None
    fork: bool = False

    @property
    def owner_is_catalog(self) -> bool:
        return self.fork


async def base_of(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    name: str,
    base_version_id: uuid.UUID | None,
    *,
    allow_fork: bool,
) -> EditBase:
    current = await fetch_org_pointed_version(conn, organization_id, name)
    if base_version_id is None:
        if current is not None:
            raise SkillAlreadyInstalled(name)
        if await fetch_platform_pointed_version(conn, name) is not None:
            raise SkillNameReserved(name)
        return EditBase(None, None)
    if current is not None:
        if current.version_id != base_version_id:
            raise SkillBaseMoved(name, current.version_id)
        return EditBase(current, current.version_id)
    platform = await fetch_platform_pointed_version(conn, name) if allow_fork else None
    if platform is None:
        raise SkillNotInstalled(name)
    if platform.version_id != base_version_id:
        raise SkillBaseMoved(name, platform.version_id)
    return EditBase(platform, None, fork=True)


async def base_files(
    store: ObjectStore,
    organization_id: uuid.UUID,
    base: EditBase,
    limits: PackageLimits,
) -> list[tuple[str, bytes]]:
    """The base version's files as bytes (one byte past the file cap at most, so a file a
    lowered limit no longer allows is refused by the parser, not cut)."""
    if base.version is None:
        return []
    owner = None if base.owner_is_catalog else organization_id
    files = []
    for entry in base.version.manifest:
        key = object_key(owner, base.version.name, base.version.version_id, entry.path)
        found = await store.get(key, max_bytes=limits.max_file_bytes + 1)
        files.append((entry.path, found.data))
    return files


def skill_md_of(version: PointedVersion) -> bytes:
    """The SKILL.md a file change keeps: as stored, else rendered from the fields."""
    if version.skill_md is not None:
        return version.skill_md
    text = render_spec_skill_md(
        name=version.name,
        description=version.description,
        matcher=version.matcher,
        body=version.body,
        frontmatter=version.frontmatter,
    )
    return text.encode()


async def copy_fork(
    store: ObjectStore, organization_id: uuid.UUID, base: EditBase
) -> uuid.UUID | None:
    """For a catalog skill edited before it was installed: its files copied server-side to
    the org's prefix under the install's own version id."""
    if not base.fork or base.version is None:
        return None
    fork_id = uuid.uuid4()
    for entry in base.version.manifest:
        await store.copy(
            object_key(None, base.version.name, base.version.version_id, entry.path),
            object_key(organization_id, base.version.name, fork_id, entry.path),
        )
    return fork_id


async def insert_fork_row(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    platform: PointedVersion,
    fork_id: uuid.UUID,
    author: VersionAuthor | None,
) -> None:
    """The install's row, a millisecond before the edit's (both are written in one
    transaction, whose time they would otherwise share): the history lists it first."""
    await insert_skill_version(
        conn,
        created_at=await fetch_just_before_now(conn),
        version_id=fork_id,
        organization_id=organization_id,
        name=platform.name,
        description=platform.description,
        body=platform.body,
        matcher=platform.matcher,
        manifest=platform.manifest,
        created_by="user",
        forked_from_version_id=platform.version_id,
        content_sha256=platform.content_sha256,
        frontmatter=platform.frontmatter,
        skill_md=platform.skill_md,
        created_via=CreatedVia.CATALOG,
        author=author,
    )
