"""An installed skill as the editor's read shows it (`GET /v1/skills/{name}`, `skillet skills
show`): its current version, the curator's state, each file with its reads, and the installed
skills it is close to, computed as drafts' `close_to` is (consolidation.neighbours)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from consolidation.file_read_queries import FileReads, list_file_reads
from consolidation.neighbours import Neighbour, close_to
from consolidation.similarity import SkillText
from skills.catalog_errors import SkillNotInstalled
from skills.catalog_models import skill_source
from skills.editing_queries import (
    SkillUsageState,
    VersionRecord,
    fetch_pointed_record,
    fetch_usage_state,
)
from skills.models import ManifestEntry
from skills.queries import list_installed_skills
from skills.skill_view import version_json


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


@dataclass(frozen=True)
class SkillView:
    record: VersionRecord
    usage: SkillUsageState
    files: tuple[FileView, ...]
    close_to: tuple[Neighbour, ...]

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
