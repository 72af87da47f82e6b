"""Value types of the skill catalog shared by the loader, matcher, index and tools."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class SkillState(StrEnum):
    ACTIVE = "active"
    STALE = "stale"
    ARCHIVED = "archived"


class CreatedVia(StrEnum):
    """How a version was made (skill_versions.created_via); who made it is `created_by`
    ('user' for every way a person of the business writes, so the curator and consolidation
    treat editor and suggestion versions as the business's) and the author key."""

    UPLOAD = "upload"  # a .zip imported (API, console, CLI)
    EDITOR = "editor"  # the skill editor (API PUT, console form, `skills edit`), a rollback
    AGENT = "agent"  # the agent's own skill_manage
    CATALOG = "catalog"  # the platform catalog, or an org's fork of it
    CONSOLIDATION = "consolidation"  # a distillation's umbrella
    SUGGESTION = "suggestion"  # taught from a person's answers (Sugestões)


def default_created_via(created_by: str, forked_from_version_id: uuid.UUID | None) -> CreatedVia:
    """What a writer that does not say means: a fork or a platform row is the catalog's."""
    if created_by == "platform" or forked_from_version_id is not None:
        return CreatedVia.CATALOG
    if created_by == "agent":
        return CreatedVia.AGENT
    return CreatedVia.UPLOAD


@dataclass(frozen=True)
class VersionAuthor:
    """The API key that made a version (until people have accounts): prefix and name."""

    key_prefix: str
    key_name: str | None = None


class FileKind(StrEnum):
    """What a stored file is to the model (skills.package.parser decides it for uploads)."""

    REFERENCE = "reference"  # references/ or any other text (LICENSE.txt, reference.md...)
    ASSET = "asset"  # binary (media, fonts, archives): described, never dumped
    TEMPLATE = "template"  # text in templates/ or assets/: read with skill_view
    SCRIPT = "script"  # scripts/: text, read with skill_view, stored and never executed


def _as_tuple(values: Iterable[str] | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        raise TypeError("keywords must be a list of strings, not one string")
    return tuple(values)


@dataclass(frozen=True, init=False)
class SkillMatcher:
    """Keywords that trigger a skill: `any_keywords` inject its body, `probe_keywords` only log."""

    any_keywords: tuple[str, ...]
    probe_keywords: tuple[str, ...]

    def __init__(
        self, any_keywords: Iterable[str] | None = (), probe_keywords: Iterable[str] | None = ()
    ) -> None:
        # Accept lists from callers; store tuples so the value is hashable and immutable.
        object.__setattr__(self, "any_keywords", _as_tuple(any_keywords))
        object.__setattr__(self, "probe_keywords", _as_tuple(probe_keywords))

    @classmethod
    def from_json(cls, raw: Any) -> SkillMatcher:
        if not isinstance(raw, dict):
            return cls()
        return cls(
            any_keywords=[str(k) for k in raw.get("any_keywords") or []],
            probe_keywords=[str(k) for k in raw.get("probe_keywords") or []],
        )

    def to_json(self) -> dict[str, list[str]]:
        return {
            "any_keywords": list(self.any_keywords),
            "probe_keywords": list(self.probe_keywords),
        }


@dataclass(frozen=True)
class SkillFrontmatter:
    """The Agent Skills spec's optional fields of one version (skills.package.frontmatter
    validates them); `metadata` as (key, value) pairs sorted by key."""

    license: str | None = None
    compatibility: str | None = None
    metadata: tuple[tuple[str, str], ...] = ()
    allowed_tools: str | None = None

    def metadata_value(self, key: str) -> str | None:
        return next((value for name, value in self.metadata if name == key), None)

    def to_json(self) -> dict[str, Any]:
        """Only the fields present, under the spec's names."""
        raw: dict[str, Any] = {}
        if self.license is not None:
            raw["license"] = self.license
        if self.compatibility is not None:
            raw["compatibility"] = self.compatibility
        if self.metadata:
            raw["metadata"] = dict(self.metadata)
        if self.allowed_tools is not None:
            raw["allowed-tools"] = self.allowed_tools
        return raw

    @classmethod
    def from_json(cls, raw: Any) -> SkillFrontmatter:
        if not isinstance(raw, dict):
            return cls()
        metadata = raw.get("metadata")
        return cls(
            license=raw.get("license"),
            compatibility=raw.get("compatibility"),
            metadata=tuple(sorted((str(k), str(v)) for k, v in (metadata or {}).items())),
            allowed_tools=raw.get("allowed-tools"),
        )


DEFAULT_FRONTMATTER = SkillFrontmatter()


@dataclass(frozen=True)
class ManifestEntry:
    """One stored support file of a skill version (`references/...` or `assets/...`)."""

    path: str
    size: int
    sha256: str
    kind: FileKind

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ManifestEntry:
        return cls(
            path=str(raw["path"]),
            size=int(raw["size"]),
            sha256=str(raw["sha256"]),
            kind=FileKind(raw["kind"]),
        )

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "kind": str(self.kind)}


@dataclass(frozen=True)
class LoadedSkill:
    """An installed skill as one turn sees it: pinned to the version its pointer named."""

    version_id: uuid.UUID
    name: str = ""
    description: str = ""
    body: str = ""
    matcher: SkillMatcher = field(default_factory=SkillMatcher)
    manifest: tuple[ManifestEntry, ...] = ()
    created_by: str = "user"

    def __post_init__(self) -> None:
        if not isinstance(self.version_id, uuid.UUID):
            object.__setattr__(self, "version_id", uuid.UUID(str(self.version_id)))
        object.__setattr__(self, "manifest", tuple(self.manifest))

    @property
    def reference_paths(self) -> tuple[str, ...]:
        """Paths the model may read with `read_skill_reference` (text outside scripts/,
        templates/ and assets/), in manifest order."""
        return tuple(e.path for e in self.manifest if e.kind is FileKind.REFERENCE)
