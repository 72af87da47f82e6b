"""The README stays a front door and the docs it points to stay true to the code.

The README is at most 300 lines and every `docs/*.md` it (or a doc) names exists; the
configuration doc's tables list exactly the settings object's fields, each with its real
default, so a new or changed setting cannot go undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import AliasChoices
from pydantic.fields import FieldInfo

from worker.settings import Settings

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
CONFIGURATION = DOCS / "configuration.md"
README_MAX_LINES = 300

DOC_LINK = re.compile(r"docs/([\w.-]+\.md)")
RELATIVE_LINK = re.compile(r"\]\(([\w.-]+\.md)(?:#[\w-]+)?\)")
# A settings row: | `VARIABLE` | default | what |
SETTING_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| (.*?) \| .* \|$")
BACKTICKED = re.compile(r"`([^`]*)`")


def env_name(name: str, field: FieldInfo) -> str:
    """The variable a field is read from: its SKILLET_ alias if it has one, else its first."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        choices = [c.upper() for c in alias.choices if isinstance(c, str)]
        return next((c for c in choices if c.startswith("SKILLET_")), choices[0])
    return f"SKILLET_{name.upper()}"


def documented_settings() -> dict[str, str]:
    """Variable -> its default cell, from every settings table of docs/configuration.md."""
    rows: dict[str, str] = {}
    for line in CONFIGURATION.read_text().splitlines():
        match = SETTING_ROW.match(line)
        if match:
            variable, default = match.groups()
            assert variable not in rows, f"{variable} is listed twice"
            rows[variable] = default
    return rows


def default_matches(default: object, cell: str) -> bool:
    if default is None or default == ():
        return cell.startswith("unset")
    shown: list[str] = BACKTICKED.findall(cell)
    if not shown:
        return False
    if isinstance(default, bool):
        return shown[0] == str(default).lower()
    if isinstance(default, tuple):  # a comma-separated list
        return shown[0] == ",".join(map(str, default))
    if isinstance(default, int | float):
        return float(shown[0]) == float(default)
    if isinstance(default, tuple):  # a comma-separated list
        return shown[0] == ",".join(map(str, default))
    return shown[0] == str(default)


def test_readme_is_a_front_door() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README has {len(lines)} lines"


@pytest.mark.parametrize("source", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_linked_doc_exists(source: Path) -> None:
    text = source.read_text()
    named = set(DOC_LINK.findall(text))
    if source.parent == DOCS:
        named |= set(RELATIVE_LINK.findall(text))
    missing = sorted(name for name in named if not (DOCS / name).is_file())
    assert not missing, f"{source.name} links to missing docs: {missing}"


def test_readme_links_every_doc() -> None:
    linked = set(DOC_LINK.findall(README.read_text()))
    assert {p.name for p in DOCS.glob("*.md")} <= linked


def test_configuration_lists_exactly_the_settings() -> None:
    documented = documented_settings()
    fields = {env_name(n, f): f for n, f in Settings.model_fields.items()}
    assert sorted(set(fields) - set(documented)) == [], "settings missing from the doc"
    assert sorted(set(documented) - set(fields)) == [], "doc rows that are no setting"
    wrong = {
        variable: (field.default, documented[variable])
        for variable, field in fields.items()
        if not default_matches(field.default, documented[variable])
    }
    assert wrong == {}, "defaults that differ from the code (real, documented)"
