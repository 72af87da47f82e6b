"""A unified diff cut into lines a page can colour: added, removed, hunk, header, context. Pure.

The text is the draft's unified diff of SKILL.md (skills.draft_diff); each line keeps its
leading marker so the page reads like the CLI's `drafts show`, and the page escapes it.
Bidirectional controls (embeddings, overrides and isolates, U+202A-U+202E and U+2066-U+2069,
and the invisible marks U+200E, U+200F, U+061C) are shown as `<U+202E>`, never applied: a
model's or an author's text cannot make a line read differently from what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

BIDI_CONTROLS = frozenset(
    [
        *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2066, 0x206A)),
        "\u200e",
        "\u200f",
        "\u061c",
    ]
)
_VISIBLE = {ord(ch): f"<U+{ord(ch):04X}>" for ch in BIDI_CONTROLS}


class LineKind(StrEnum):
    HEADER = "header"  # --- / +++
    HUNK = "hunk"  # @@ -a,b +c,d @@
    ADDED = "added"
    REMOVED = "removed"
    CONTEXT = "context"
    NOTE = "note"  # the cut note of a long diff, "\ No newline at end of file"


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind
    text: str


def _kind(line: str, in_header: bool) -> LineKind:
    if in_header and (line.startswith("--- ") or line.startswith("+++ ")):
        return LineKind.HEADER
    if line.startswith("@@"):
        return LineKind.HUNK
    if line.startswith("+"):
        return LineKind.ADDED
    if line.startswith("-"):
        return LineKind.REMOVED
    if line.startswith(" "):
        return LineKind.CONTEXT
    return LineKind.NOTE


def diff_lines(diff: str) -> list[DiffLine]:
    """Every line of `diff`, classified; "" gives []."""
    lines: list[DiffLine] = []
    in_header = True  # before the first hunk, "---"/"+++" name the files
    for raw in diff.splitlines():
        kind = _kind(raw, in_header)
        if kind is LineKind.HUNK:
            in_header = False
        lines.append(DiffLine(kind, visible(raw)))
    return lines


def visible(text: str) -> str:
    """`text` with each bidirectional control written out (`<U+202E>`), not applied."""
    return text.translate(_VISIBLE)


def counts(lines: list[DiffLine]) -> tuple[int, int]:
    """(added, removed) lines."""
    added = sum(1 for line in lines if line.kind is LineKind.ADDED)
    removed = sum(1 for line in lines if line.kind is LineKind.REMOVED)
    return added, removed
