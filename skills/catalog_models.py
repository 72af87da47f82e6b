"""Values the catalog operations return: import/install results, the org's listing, sources.

Pure: no I/O. `to_json` gives the CLI's JSON contract (ARCHITECTURE.md).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class ImportStatus(StrEnum):
    IMPORTED = "imported"
    UNCHANGED = "unchanged"


class SkillSource(StrEnum):
    MANUAL = "manual"
    CATALOG = "catalog"
    AGENT = "agent"


@dataclass(frozen=True)
class ImportResult:
    name: str
    version_id: uuid.UUID
    status: ImportStatus
    # 'stale' or 'archived' when the import brought a curated skill back to active.
    reactivated_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version_id": str(self.version_id),
            "status": str(self.status),
            "reactivated_from": self.reactivated_from,
        }


@dataclass(frozen=True)
class InstallResult:
    name: str
    version_id: uuid.UUID
    forked_from_version_id: uuid.UUID
    # 'stale' or 'archived' when an earlier usage row of the name was made active again.
    reactivated_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version_id": str(self.version_id),
            "forked_from_version_id": str(self.forked_from_version_id),
            "reactivated_from": self.reactivated_from,
        }


@dataclass(frozen=True)
class InstalledSkill:
    name: str
    description: str
    version_id: uuid.UUID
    source: SkillSource
    updated_at: datetime
    state: str = "active"
    absorbed_into: str | None = None  # archived into this umbrella by a distillation

    def to_json(self) -> dict[str, Any]:
        raw: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "version_id": str(self.version_id),
            "source": str(self.source),
            "updated_at": self.updated_at.isoformat(),
            "state": self.state,
        }
        if self.absorbed_into is not None:
            raw["absorbed_into"] = self.absorbed_into
        return raw


@dataclass(frozen=True)
class CatalogSkill:
    name: str
    description: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description}


@dataclass(frozen=True)
class SkillListing:
    """`installed`: the org's pointers; `catalog`: platform skills it has not installed."""

    installed: tuple[InstalledSkill, ...]
    catalog: tuple[CatalogSkill, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "installed": [s.to_json() for s in self.installed],
            "catalog": [s.to_json() for s in self.catalog],
        }


def skill_source(created_by: str, forked_from_version_id: uuid.UUID | None) -> SkillSource:
    """Where an installed version came from: a catalog fork wins over who created the row."""
    if forked_from_version_id is not None or created_by == "platform":
        return SkillSource.CATALOG
    if created_by == "agent":
        return SkillSource.AGENT
    return SkillSource.MANUAL
