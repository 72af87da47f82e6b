"""One group's umbrella version, pure and deterministic: the merge a proposal offers.

The umbrella keeps its name, description, frontmatter and its own instructions; its body
gains a closing section naming each absorbed skill and where its instructions went. Each
absorbed skill's SKILL.md (rendered from its fields) becomes `references/<name>/SKILL.md`,
its text files `references/<name>/<path>` (a leading `references/` dropped), its binary
files `assets/<name>/<path>` (a leading `assets/` dropped). The matcher is the union of the
group's keywords, deduplicated (accents and case folded), the umbrella's first. The result
must pass the rules of any skill the agent writes (skills.authoring_rules.check_skill_md:
keyword counts and lengths, body lines, frontmatter bytes) and the deployment's package
limits (files, bytes): otherwise `TooLarge` and nothing is proposed, so a merge never drops
a keyword or a file to fit.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from consolidation.similarity import fold
from skills.authoring_rules import (
    MAX_SUPPORT_PATH_CHARS,
    AuthoringError,
    check_skill_md,
    check_support_path,
    render_skill_md,
)
from skills.catalog_queries import PointedVersion
from skills.models import FileKind, ManifestEntry, SkillMatcher
from skills.package.limits import MAX_FILE_BYTES, MAX_FILES, MAX_KEYWORDS, MAX_TOTAL_BYTES
from skills.package.skill_md import SkillMd

SECTION = "## Skills incorporadas"
SECTION_INTRO = (
    "Estas skills parecidas foram reunidas nesta; as instruções de cada uma estão no arquivo "
    "indicado (leia com read_skill_reference quando o pedido for sobre ela)."
)
MAX_SUMMARY_CHARS = 160  # of an absorbed skill's description in the umbrella's body


class TooLarge(Exception):
    """The merge would break a package limit; `rule` names which."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


@dataclass(frozen=True)
class Limits:
    max_files: int = MAX_FILES  # SKILL.md included
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_file_bytes: int = MAX_FILE_BYTES


@dataclass(frozen=True)
class FileCopy:
    """A stored file the umbrella's new version takes over (copied server-side)."""

    source_name: str
    source_version_id: uuid.UUID
    source_path: str
    entry: ManifestEntry  # under its new path


@dataclass(frozen=True)
class NewFile:
    path: str
    data: bytes
    kind: FileKind


@dataclass(frozen=True)
class UmbrellaPlan:
    skill: SkillMd
    manifest: tuple[ManifestEntry, ...]  # sorted by path
    copies: tuple[FileCopy, ...]
    added: tuple[NewFile, ...]


def moved_path(absorbed: str, entry: ManifestEntry) -> str:
    """Where an absorbed skill's file lands in the umbrella."""
    folder = "assets" if entry.kind is FileKind.ASSET else "references"
    head, _, rest = entry.path.partition("/")
    tail = rest if head == folder and rest else entry.path
    return f"{folder}/{absorbed}/{tail}"


def union_keywords(lists: Iterable[Sequence[str]], exclude: Iterable[str] = ()) -> list[str]:
    seen = {fold(k).strip() for k in exclude}
    union: list[str] = []
    for keywords in lists:
        for keyword in keywords:
            key = fold(keyword).strip()
            if key and key not in seen:
                seen.add(key)
                union.append(keyword)
    return union


def _one_line(text: str, max_chars: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= max_chars else line[: max_chars - 1].rstrip() + "…"


def umbrella_body(umbrella: PointedVersion, absorbed: Sequence[PointedVersion]) -> str:
    lines = [umbrella.body.strip(), "", SECTION, SECTION_INTRO]
    for member in absorbed:
        summary = _one_line(member.description, MAX_SUMMARY_CHARS)
        lines.append(f"- {member.name}: {summary} (references/{member.name}/SKILL.md)")
    return "\n".join(lines)


def plan_umbrella(
    umbrella: PointedVersion,
    absorbed: Sequence[PointedVersion],
    limits: Limits = Limits(),
    *,
    body: str | None = None,
) -> UmbrellaPlan:
    """The umbrella's next version; raises TooLarge. `body` replaces the deterministic one
    (the model's rewrite, consolidation.rewrite, held to the same rules)."""
    group = [umbrella, *absorbed]
    any_keywords = union_keywords(m.matcher.any_keywords for m in group)
    probes = union_keywords((m.matcher.probe_keywords for m in group), exclude=any_keywords)
    if len(any_keywords) > MAX_KEYWORDS or len(probes) > MAX_KEYWORDS:
        raise TooLarge("keywords")
    matcher = SkillMatcher(any_keywords, probes)
    if body is None:
        body = umbrella_body(umbrella, absorbed)
    text = render_skill_md(umbrella.name, umbrella.description, matcher, body, umbrella.frontmatter)
    try:
        skill = check_skill_md(text, expected_name=umbrella.name)
    except AuthoringError as exc:
        raise TooLarge(exc.code) from exc
    copies = [FileCopy(umbrella.name, umbrella.version_id, e.path, e) for e in umbrella.manifest]
    added: list[NewFile] = []
    for member in absorbed:
        skill_md = render_skill_md(
            member.name, member.description, member.matcher, member.body, member.frontmatter
        ).encode("utf-8")
        added.append(NewFile(f"references/{member.name}/SKILL.md", skill_md, FileKind.REFERENCE))
        for entry in member.manifest:
            kind = FileKind.ASSET if entry.kind is FileKind.ASSET else FileKind.REFERENCE
            moved = ManifestEntry(moved_path(member.name, entry), entry.size, entry.sha256, kind)
            copies.append(FileCopy(member.name, member.version_id, entry.path, moved))
    manifest = [c.entry for c in copies] + [_entry(f) for f in added]
    _check_limits(skill, manifest, limits)
    return UmbrellaPlan(
        skill, tuple(sorted(manifest, key=lambda e: e.path)), tuple(copies), tuple(added)
    )


def _entry(file: NewFile) -> ManifestEntry:
    return ManifestEntry(
        file.path, len(file.data), hashlib.sha256(file.data).hexdigest(), file.kind
    )


def _check_limits(skill: SkillMd, manifest: Sequence[ManifestEntry], limits: Limits) -> None:
    paths = [e.path for e in manifest]
    if len(set(paths)) != len(paths):
        raise TooLarge("file_paths_collide")
    for entry in manifest:
        if len(entry.path) > MAX_SUPPORT_PATH_CHARS:
            raise TooLarge("file_path_too_long")
        try:
            check_support_path(entry.path)
        except AuthoringError as exc:
            raise TooLarge(exc.code) from exc
        if entry.size > limits.max_file_bytes:
            raise TooLarge("file_too_large")
    if len(manifest) + 1 > limits.max_files:
        raise TooLarge("files")
    skill_md = render_skill_md(
        skill.name, skill.description, skill.matcher, skill.body, skill.frontmatter
    )
    if len(skill_md.encode("utf-8")) + sum(e.size for e in manifest) > limits.max_total_bytes:
        raise TooLarge("bytes")
