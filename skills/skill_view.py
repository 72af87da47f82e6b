"""What the skill editor reads: an installed skill with its files and reads, its history,
one version, the diff between two, and a file's bytes. Org-scoped like every query here;
the organization id comes from the trusted caller."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from skills.catalog_errors import SkillNotInstalled
from skills.catalog_models import skill_source
from skills.consolidation.file_read_queries import FileReads, list_file_reads
from skills.consolidation.neighbours import Neighbour, close_to
from skills.consolidation.similarity import SkillText
from skills.draft_diff import DraftDiff, diff_versions
from skills.edit_package import matcher_texts
from skills.editing_errors import SkillFileNotFound, SkillVersionNotFound
from skills.editing_queries import (
    SkillUsageState,
    VersionRecord,
    fetch_pointed_record,
    fetch_skill_version,
    fetch_usage_state,
)
from skills.models import FileKind, ManifestEntry
from skills.queries import list_installed_skills
from skills.storage import ObjectStore, object_key


@dataclass(frozen=True)
class FileView:
    entry: ManifestEntry
    reads: FileReads | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.entry.path,
            "size": self.entry.size,
            "kind": str(self.entry.kind),
            "read_count": 0 if self.reads is None else self.reads.read_count,
            "last_read_at": None if self.reads is None else self.reads.last_read_at.isoformat(),
        }


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


@dataclass(frozen=True)
class SkillView:
    record: VersionRecord
    usage: SkillUsageState
    files: tuple[FileView, ...]
    close_to: tuple[Neighbour, ...]

    @property
    def updated_at(self) -> datetime:
        return self.record.created_at

    def to_json(self) -> dict[str, Any]:
        version = self.record.version
        return {
            **version_json(self.record, current=True),
            "files": [f.to_json() for f in self.files],
            "source": str(skill_source(version.created_by, version.forked_from_version_id)),
            "state": self.usage.state,
            "pinned": self.usage.pinned,
            "close_to": [n.to_json() for n in self.close_to],
        }


def _text(record: VersionRecord) -> SkillText:
    v = record.version
    return SkillText(v.name, v.description, v.body, v.matcher.any_keywords)


async def show_skill(conn: asyncpg.Connection, organization_id: uuid.UUID, name: str) -> SkillView:
    """The org's installed `name` at its current version (archived included)."""
    record = await fetch_pointed_record(conn, organization_id, name)
    if record is None:
        raise SkillNotInstalled(name)
    usage = await fetch_usage_state(conn, organization_id, name)
    reads = await list_file_reads(conn, organization_id, [name])
    files = tuple(FileView(e, reads.get((name, e.path))) for e in record.version.manifest)
    installed = await list_installed_skills(conn, organization_id)
    # The drafts' hint, as drafts compute it: this skill against the others installed.
    [near] = close_to(
        [_text(record)],
        [SkillText(s.name, s.description, s.body, s.matcher.any_keywords) for s in installed],
    )
    return SkillView(record, usage, files, tuple(near))


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
