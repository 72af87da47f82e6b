"""`skillet skills ...` and `skillet catalog seed` end to end: JSON contracts, one-line errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from cli.main import main
from tests.integration.support import create_org
from tests.package_builders import skill_md_text, skill_zip, zip_files
from worker.settings import Settings


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1, lines
    parsed: dict[str, Any] = json.loads(lines[0])
    return code, parsed


async def _main(*argv: str) -> int:
    """main() runs its own event loop (asyncio.run): give it a thread of its own."""
    return await asyncio.to_thread(main, list(argv))


def _error_line(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 1
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    return line


@pytest.fixture
def org(env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]) -> str:
    org_id = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Clínica Sorriso", "--id", org_id]) == 0
    capsys.readouterr()
    return org_id


def test_catalog_seed_is_idempotent(org: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, first = _run(capsys, "catalog", "seed")
    assert code == 0
    assert [(s["name"], s["status"]) for s in first["seeded"]] == [
        ("agendamento", "imported"),
        ("objecao-preco", "imported"),
    ]
    code, again = _run(capsys, "catalog", "seed")
    assert code == 0 and {s["status"] for s in again["seeded"]} == {"unchanged"}
    assert main(["catalog", "seed"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("agendamento: unchanged")


def test_import_list_install_uninstall(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "seed"]) == 0
    capsys.readouterr()
    package = tmp_path / "frete.zip"
    package.write_bytes(skill_zip("frete", references={"tabela.md": "SP: grátis"}))

    code, imported = _run(capsys, "skills", "import", str(package), "--org", org)
    assert code == 0
    assert {k: imported[k] for k in ("name", "status")} == {"name": "frete", "status": "imported"}
    assert set(imported) == {"name", "version_id", "status", "reactivated_from", "message"}
    assert imported["reactivated_from"] is None
    code, unchanged = _run(capsys, "skills", "import", str(package), "--org", org)
    assert (code, unchanged["status"], unchanged["version_id"]) == (
        0,
        "unchanged",
        imported["version_id"],
    )

    code, installed = _run(capsys, "skills", "install", "agendamento", "--org", org)
    assert code == 0 and installed["name"] == "agendamento"
    assert set(installed) == {
        "name",
        "version_id",
        "forked_from_version_id",
        "reactivated_from",
        "message",
    }
    assert installed["reactivated_from"] is None

    code, listing = _run(capsys, "skills", "list", "--org", org)
    assert code == 0
    assert [(s["name"], s["source"]) for s in listing["installed"]] == [
        ("agendamento", "catalog"),
        ("frete", "manual"),
    ]
    assert set(listing["installed"][0]) == {
        "name",
        "description",
        "version_id",
        "source",
        "updated_at",
        "state",
    }
    assert listing["installed"][0]["state"] == "active"
    assert listing["installed"][1]["version_id"] == imported["version_id"]
    assert [s["name"] for s in listing["catalog"]] == ["objecao-preco"]

    code, removed = _run(capsys, "skills", "uninstall", "agendamento", "--org", org)
    assert code == 0 and removed["name"] == "agendamento"
    code, listing = _run(capsys, "skills", "list", "--org", org)
    assert [s["name"] for s in listing["catalog"]] == ["agendamento", "objecao-preco"]

    assert main(["skills", "list", "--org", org]) == 0
    human = capsys.readouterr().out
    assert "frete  manual" in human and "catalog (2):" in human


def test_refusals_are_one_line_with_code_and_pt_br_message(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "seed"]) == 0
    assert main(["skills", "install", "objecao-preco", "--org", org]) == 0
    capsys.readouterr()

    line = _error_line(capsys, "skills", "install", "objecao-preco", "--org", org)
    assert line.startswith("error: skill_already_installed: A skill 'objecao-preco' já está")
    line = _error_line(capsys, "skills", "uninstall", "frete", "--org", org)
    assert line.startswith("error: skill_not_installed: A skill 'frete' não está instalada")
    line = _error_line(capsys, "skills", "install", "nada", "--org", org)
    assert line.startswith("error: catalog_skill_not_found: O catálogo não tem a skill 'nada'")

    bad = tmp_path / "ruim.zip"
    binary = b"\x7fELF\xff\x00"  # a binary where only text the agent reads may go
    bad.write_bytes(zip_files({"SKILL.md": skill_md_text("frete"), "references/run": binary}))
    line = _error_line(capsys, "skills", "import", str(bad), "--org", org)
    assert line.startswith("error: skill_extension_not_allowed: 'references/run' não é um texto")
    code, refused = _run(capsys, "skills", "import", str(bad), "--org", org)
    assert code == 1 and refused["error"] == "skill_extension_not_allowed"

    not_zip = tmp_path / "texto.zip"
    not_zip.write_text("isto não é um zip")
    line = _error_line(capsys, "skills", "import", str(not_zip), "--org", org)
    assert line.startswith("error: skill_not_a_zip: O arquivo enviado não é um .zip válido")

    line = _error_line(capsys, "skills", "import", str(tmp_path / "nao-existe.zip"), "--org", org)
    assert line.startswith("error: file_unreadable: ")

    stranger = str(uuid.uuid4())
    line = _error_line(capsys, "skills", "list", "--org", stranger)
    assert line == (
        f"error: organization_not_found: A organização {stranger} não existe. Confira o id ou "
        "crie a organização com `skillet orgs create`."
    )


async def test_install_over_an_archived_usage_row_says_it_is_active_again(
    env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    org = str(await create_org(db))
    for argv in (
        ["catalog", "seed"],
        ["skills", "install", "agendamento", "--org", org],
        ["skills", "uninstall", "agendamento", "--org", org],
    ):
        assert await _main(*argv) == 0
    # What a curator pass over an earlier (agent-authored) skill of that name leaves behind.
    await db.execute(
        "insert into skill_usage (organization_id, skill_name, created_by, state, archived_at) "
        "values ($1, 'agendamento', 'agent', 'archived', now())",
        uuid.UUID(org),
    )
    capsys.readouterr()

    assert await _main("skills", "install", "objecao-preco", "--org", org, "--json") == 0
    assert json.loads(capsys.readouterr().out)["reactivated_from"] is None
    assert await _main("skills", "install", "agendamento", "--org", org, "--json") == 0
    installed = json.loads(capsys.readouterr().out)
    assert installed["reactivated_from"] == "archived"
    assert installed["message"].endswith("(was archived: active again)")
    state = await db.fetchval(
        "select state from skill_usage where organization_id = $1 and skill_name = 'agendamento'",
        uuid.UUID(org),
    )
    assert state == "active"
    assert await _main("skills", "list", "--org", org) == 0
    listed = capsys.readouterr().out
    assert "agendamento  catalog" in listed and "[archived]" not in listed
