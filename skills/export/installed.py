"""`skills export`: an org's installed skill as an Agent Skills .zip (skills.export.archive).

Reads the version the org's pointer names (archived skills too: history is the business's)
and its files from object storage; writes nothing. Files are read whole, one at a time, each
bounded by the size its manifest entry records.
"""

from __future__ import annotations

import uuid

import asyncpg

from core.object_store import ObjectStore, object_key
from skills.catalog import require_organization
from skills.catalog_errors import SkillNotInstalled
from skills.catalog_queries import PointedVersion, fetch_org_pointed_version
from skills.export.archive import export_zip, exported_verbatim, render_spec_skill_md


def exported_skill_md(version: PointedVersion) -> bytes:
    """The stored upload when it is in the spec's form, else the version rendered."""
    if version.skill_md is not None and exported_verbatim(version.skill_md):
        return version.skill_md
    text = render_spec_skill_md(
        name=version.name,
        description=version.description,
        matcher=version.matcher,
        body=version.body,
        frontmatter=version.frontmatter,
    )
    return text.encode("utf-8")


async def export_skill(
    conn: asyncpg.Connection, store: ObjectStore, *, organization_id: uuid.UUID, name: str
) -> bytes:
    """The .zip of the org's `name`; SkillNotInstalled when the org has no such pointer."""
    await require_organization(conn, organization_id)
    version = await fetch_org_pointed_version(conn, organization_id, name)
    if version is None:
        raise SkillNotInstalled(name)
    files = []
    for entry in version.manifest:
        key = object_key(organization_id, name, version.version_id, entry.path)
        stored = await store.get(key, max_bytes=entry.size)
        files.append((entry.path, stored.data))
    return export_zip(name, exported_skill_md(version), files)
