"""A stored skill version as an Agent Skills package: its SKILL.md and its .zip (pure).

What `skillet skills export` writes, decided here:
- The .zip holds one top folder named after the skill (the spec's validator wants the
  folder's name to be the skill's), with SKILL.md and every file of the manifest under it at
  its stored path. Entries are sorted, deflated, dated 1980-01-01 and marked as regular
  rw-r--r-- files, so the same version always exports to the same bytes.
- SKILL.md is the stored upload byte for byte when it is already in the spec's form: it
  parses, has no top-level key outside the spec, and its YAML is of the strict kind the
  spec's validator reads (strictyaml: no flow `[a, b]` / `{a: b}` collections, no explicit
  `!!tags`, no repeated keys, no `---` inside the frontmatter, which its splitter would take
  for the end; no BOM). See `exported_verbatim`. Otherwise (a version stored before
  skill_versions kept skill_md, the agent's own skills, an upload with our legacy `matcher`)
  it is rendered from the version's fields by `render_spec_skill_md`: name, description,
  license, compatibility, metadata with the keywords as `skillet-keywords` and
  `skillet-probe-keywords`, allowed-tools, then the body. A legacy keyword holding a comma
  has it replaced by a space (the matcher reads both alike, since it matches words in order
  across any non-word characters); it is the one case where the rendered form reads back
  different.
- Either way the export re-imports as "unchanged" (skills.catalog.same_content).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

import yaml
from yaml import CSafeLoader

from skills.models import SkillFrontmatter, SkillMatcher
from skills.package.errors import SkillPackageError
from skills.package.skill_md import (
    KEYWORDS_KEY,
    PROBE_KEYWORDS_KEY,
    parse_skill_md,
    split_frontmatter,
)

SKILL_MD = "SKILL.md"
# The earliest date a zip entry can hold: exports of one version are byte-identical.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_REGULAR_FILE_MODE = 0o100644
# Wide enough that YAML never folds a description mid-sentence into a continuation line.
_YAML_WIDTH = 4096


def exported_verbatim(skill_md: bytes) -> bool:
    """Whether stored SKILL.md bytes are exported as they are (spec form, strict YAML)."""
    if skill_md.startswith(b"\xef\xbb\xbf"):
        return False  # the spec's validator expects `---` as the first bytes
    try:
        parsed = parse_skill_md(skill_md)
    except SkillPackageError:
        return False
    if parsed.nonstandard_keys:
        return False
    frontmatter, _ = split_frontmatter(skill_md.decode("utf-8"))
    return "---" not in frontmatter and _strict_yaml(frontmatter)


@dataclass
class _Collection:
    keys: set[str] | None  # a mapping's keys so far; None for a sequence
    expect_key: bool = True


def _strict_yaml(frontmatter: str) -> bool:
    """No construct strictyaml refuses (module docstring). The text already parsed and is at
    most MAX_FRONTMATTER_BYTES, so this walk of its events is short."""
    stack: list[_Collection] = []
    for event in yaml.parse(frontmatter, Loader=CSafeLoader):
        if isinstance(event, yaml.NodeEvent) and getattr(event, "tag", None) is not None:
            return False  # an explicit `!!tag`
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)) and stack:
            parent = stack[-1]
            if parent.keys is not None:
                if parent.expect_key:
                    if not isinstance(event, yaml.ScalarEvent) or event.value in parent.keys:
                        return False  # a repeated key, or a collection as a key
                    parent.keys.add(event.value)
                parent.expect_key = not parent.expect_key
        if isinstance(event, yaml.CollectionStartEvent):
            if event.flow_style:
                return False
            stack.append(_Collection(set() if isinstance(event, yaml.MappingStartEvent) else None))
        elif isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
    return True


def render_spec_skill_md(
    *,
    name: str,
    description: str,
    matcher: SkillMatcher,
    body: str,
    frontmatter: SkillFrontmatter,
) -> str:
    """A SKILL.md in the spec's form from a version's fields (see the module docstring)."""
    meta: dict[str, object] = {"name": name, "description": description}
    meta.update(
        {k: v for k, v in frontmatter.to_json().items() if k in ("license", "compatibility")}
    )
    metadata = dict(frontmatter.metadata)
    if matcher.any_keywords:
        metadata[KEYWORDS_KEY] = _joined(matcher.any_keywords)
    if matcher.probe_keywords:
        metadata[PROBE_KEYWORDS_KEY] = _joined(matcher.probe_keywords)
    if metadata:
        meta["metadata"] = metadata
    if frontmatter.allowed_tools is not None:
        meta["allowed-tools"] = frontmatter.allowed_tools
    text = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=_YAML_WIDTH)
    return f"---\n{text}---\n{body.strip()}\n"


def _joined(keywords: Sequence[str]) -> str:
    return ", ".join(" ".join(k.replace(",", " ").split()) for k in keywords)


def export_zip(name: str, skill_md: bytes, files: Sequence[tuple[str, bytes]]) -> bytes:
    """`name/SKILL.md` and `name/<path>` for every file, deterministic (module docstring)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in [(SKILL_MD, skill_md), *sorted(files)]:
            info = zipfile.ZipInfo(f"{name}/{path}", date_time=_ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = _REGULAR_FILE_MODE << 16
            archive.writestr(info, data)
    return buffer.getvalue()
