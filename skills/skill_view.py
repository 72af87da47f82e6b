"""What the skill editor reads: one version of a skill (as the API shows it), the diff
between two, and a file's bytes. Org-scoped like every query here; the organization id comes
from the trusted caller. (The installed skill with its reads and close skills is composed
above, in api.skill_detail: those come from consolidation, a layer up.)"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from core.object_store import ObjectStore, object_key
from skills.catalog_errors import SkillNotInstalled
from skills.draft_diff import DraftDiff, diff_versions
from skills.edit_package import matcher_texts
from skills.editing_errors import SkillFileNotFound, SkillVersionNotFound
from skills.editing_queries import VersionRecord, fetch_pointed_record, fetch_skill_version
from skills.models import FileKind, ManifestEntry


def version_json(record: VersionRecord, *, current: bool) -> dict[str, Any]:
    """One version as the API shows it (its files without reads: those are the skill's)."""
    version = record.version
    keywords, probes = matcher_texts(version.matcher)
    author = None
    if record.author_key_prefix is not None:
        author = {"key_prefix": record.author_key_prefix, "key_name": record.author_key_name}
    return {
        "name": version.name,
        "version_id": str(version.version_id),
        "description": version.description,
        "body": version.body,
        "keywords": keywords,
        "probe_keywords": probes,
        "created_at": record.created_at.isoformat(),
        "created_by": version.created_by,
        "created_via": str(record.created_via),
        "author": author,
        "forked_from_version_id": None
        if version.forked_from_version_id is None
        else str(version.forked_from_version_id),
        "current": current,
        "files": [{"path": e.path, "size": e.size, "kind": str(e.kind)} for e in version.manifest],
    }


async def show_version(
    conn: asyncpg.Connection, organization_id: uuid.UUID, name: str, version_id: uuid.UUID
) -> VersionRecord:
    record = await fetch_skill_version(conn, organization_id, name, version_id)
    if record is None:
        raise SkillVersionNotFound(name)
    return record


def diff_records(before: VersionRecord, after: VersionRecord) -> DraftDiff:
    """SKILL.md and files from `before` to `after`, as a draft's review shows them."""
    return diff_versions(before.version, after.version, label=str(after.version.version_id)[:8])


@dataclass(frozen=True)
class FileBytes:
    path: str
    kind: FileKind
    data: bytes


async def locate_file(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    name: str,
    path: str,
    version_id: uuid.UUID | None,
) -> tuple[str, ManifestEntry]:
    """The object key and manifest entry of `path` in the current (or given) version."""
    if version_id is None:
        record = await fetch_pointed_record(conn, organization_id, name)
        if record is None:
            raise SkillNotInstalled(name)
    else:
        record = await show_version(conn, organization_id, name, version_id)
    entry = next((e for e in record.version.manifest if e.path == path), None)
    if entry is None:
        raise SkillFileNotFound(name, path)
    key = object_key(organization_id, name, record.version.version_id, path)
    return key, entry


async def read_file(store: ObjectStore, key: str, entry: ManifestEntry) -> FileBytes:
    """The stored bytes (the package limits bound them; one read past the size says more)."""
    found = await store.get(key, max_bytes=max(entry.size, 1))
    return FileBytes(entry.path, entry.kind, found.data)
