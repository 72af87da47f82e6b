"""What a draft changes, for the person who decides: SKILL.md as a unified diff, files by hash.

Pure: two versions in, a value out. The SKILL.md text compared is the one the agent edits
(`render_skill_md`), so a reviewer reads exactly what the model wrote; support files are
compared by sha256 and size (their bytes live in object storage).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from skills.authoring_rules import render_skill_md
from skills.catalog_queries import PointedVersion

# A diff longer than this is cut (with a note): a reviewer reads the rest in the version.
MAX_DIFF_LINES = 2_000


@dataclass(frozen=True)
class DraftDiff:
    skill_md: str  # unified diff, "" when SKILL.md is unchanged
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def unchanged(self) -> bool:
        return not (self.skill_md or self.added or self.removed or self.changed)

    def to_json(self) -> dict[str, object]:
        return {
            "skill_md": self.skill_md,
            "files": {
                "added": list(self.added),
                "removed": list(self.removed),
                "changed": list(self.changed),
            },
        }


def skill_md_of(version: PointedVersion) -> str:
    return render_skill_md(
        version.name, version.description, version.matcher, version.body, version.frontmatter
    )


def diff_versions(
    installed: PointedVersion | None, draft: PointedVersion, *, label: str = "rascunho"
) -> DraftDiff:
    """`installed` None: a new skill, everything is added; `label` names the new side."""
    before = "" if installed is None else skill_md_of(installed)
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            skill_md_of(draft).splitlines(keepends=True),
            fromfile="instalada/SKILL.md" if installed is not None else "/dev/null",
            tofile=f"{label}/SKILL.md",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        lines = [*lines[:MAX_DIFF_LINES], f"\n... ({more} linhas a mais não mostradas)\n"]
    old = {} if installed is None else {e.path: e.sha256 for e in installed.manifest}
    new = {e.path: e.sha256 for e in draft.manifest}
    return DraftDiff(
        skill_md="".join(lines),
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(p for p in new.keys() & old.keys() if new[p] != old[p])),
    )
