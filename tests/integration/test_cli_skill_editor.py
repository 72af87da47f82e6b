"""`skillet skills show|versions|edit|rollback` end to end: JSON, one-line errors, audit."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from cli.main import main
from worker.settings import Settings

SKILL_MD = """---
name: {name}
description: Horário de funcionamento da loja.
license: MIT
metadata:
  skillet-keywords: "horário, abre, fecha"
---
{body}
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    parsed: dict[str, Any] = json.loads(lines[0])
    return code, parsed


def _error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    return line


@pytest.fixture
def org(env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]) -> str:
    org_id = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Loja do Bairro", "--id", org_id]) == 0
    capsys.readouterr()
    return org_id


def _file(tmp_path: Path, name: str, body: str, file_name: str = "SKILL.md") -> str:
    path = tmp_path / file_name
    path.write_text(SKILL_MD.format(name=name, body=body), encoding="utf-8")
    return str(path)


def test_edit_show_versions_and_rollback(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _file(tmp_path, "horario", "Abrimos às 8h.")
    code, created = _run(capsys, "skills", "edit", "horario", "--org", org, "--from-file", first)
    assert code == 0 and created["created"] is True
    v1 = created["version_id"]

    second = _file(tmp_path, "horario", "Abrimos às 9h.", "v2.md")
    line = _error_line(capsys, "skills", "edit", "horario", "--org", org, "--from-file", second)
    assert line.startswith("error: base_required: A skill 'horario' já existe")
    code, edited = _run(
        capsys, "skills", "edit", "horario", "--org", org, "--from-file", second, "--base", v1
    )
    assert code == 0 and edited["created"] is False
    v2 = edited["version_id"]
    code, stale = _run(
        capsys, "skills", "edit", "horario", "--org", org, "--from-file", second, "--base", v1
    )
    assert (code, stale["error"]) == (1, "skill_base_moved")

    other = _file(tmp_path, "outra-skill", "Texto.", "outra.md")
    line = _error_line(
        capsys, "skills", "edit", "horario", "--org", org, "--from-file", other, "--base", v2
    )
    assert line.startswith("error: skill_name_mismatch: O SKILL.md se chama 'outra-skill'")
    long_body = _file(tmp_path, "horario", "linha\n" * 201, "longo.md")
    line = _error_line(
        capsys, "skills", "edit", "horario", "--org", org, "--from-file", long_body, "--base", v2
    )
    assert line.startswith("error: skill_body_too_long: O corpo do SKILL.md tem 201 linhas")

    code, shown = _run(capsys, "skills", "show", "horario", "--org", org)
    assert code == 0
    assert (shown["version_id"], shown["body"], shown["keywords"]) == (
        v2,
        "Abrimos às 9h.",
        "horário, abre, fecha",
    )
    assert shown["created_via"] == "editor" and shown["author"] is None
    assert main(["skills", "show", "horario", "--org", org]) == 0
    human = capsys.readouterr().out
    assert "Abrimos às 9h." in human and "keywords: horário, abre, fecha" in human

    code, versions = _run(capsys, "skills", "versions", "horario", "--org", org)
    assert [(v["version_id"], v["current"]) for v in versions["items"]] == [
        (v2, True),
        (v1, False),
    ]
    code, back = _run(capsys, "skills", "rollback", "horario", "--org", org, "--to", v1)
    assert code == 0 and back["version_id"] == v1 and back["base_version_id"] == v2
    code, shown = _run(capsys, "skills", "show", "horario", "--org", org)
    assert shown["body"] == "Abrimos às 8h."
    line = _error_line(
        capsys, "skills", "rollback", "horario", "--org", org, "--to", str(uuid.uuid4())
    )
    assert line.startswith("error: skill_version_not_found:")


async def test_cli_writes_are_audited_as_cli(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], db: asyncpg.Connection
) -> None:
    path = _file(tmp_path, "pix", "Aceitamos Pix.")
    # main() runs its own event loop (asyncio.run): a thread of its own.
    assert (
        await asyncio.to_thread(main, ["skills", "edit", "pix", "--org", org, "--from-file", path])
        == 0
    )
    rows = await db.fetch(
        "select actor, action, outcome from audit_log where organization_id = $1",
        uuid.UUID(org),
    )
    assert [tuple(r) for r in rows] == [("cli", "skill.edit", "ok")]
    frontmatter = await db.fetchval(
        "select frontmatter from skill_versions where organization_id = $1 and name = 'pix'",
        uuid.UUID(org),
    )
    assert frontmatter == {"license": "MIT"}  # the file's own fields are kept
