"""Agent Skills interop end to end, through `skillet` on real Postgres and S3: public layouts
import within the limits (and past them once raised), exports pass the spec's validator
(`agentskills validate`, from skills-ref) and re-import as "unchanged", old versions too."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from cli.main import main
from skills.catalog import import_skill_package
from skills.catalog_queries import fetch_org_pointed_version
from skills.catalog_seed import DEFAULT_CATALOG_DIR
from skills.models import FileKind, SkillFrontmatter, SkillMatcher
from skills.queries import insert_skill_version, list_installed_skills, upsert_skill_pointer
from tests.agentskills_layouts import (
    PUBLIC_LAYOUTS,
    document_toolkit,
    font_gallery,
    spec_skill_md,
    webapp_tester,
)
from tests.integration.support import create_org
from tests.package_builders import skill_zip, zip_files
from tests.tool_support import read_reference, reference_context
from turn.model import ToolCall
from turn.tools.registry import default_registry
from worker.resources import Resources
from worker.settings import Settings

VALIDATOR = Path(sys.executable).with_name("agentskills")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    lines = (captured.out or captured.err).strip().splitlines()
    assert len(lines) == 1, lines
    parsed: dict[str, Any] = json.loads(lines[0]) if code == 0 else {"error": lines[0]}
    return code, parsed


def _validate(folder: Path) -> None:
    result = subprocess.run(
        [str(VALIDATOR), "validate", str(folder)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def _unzip(data: Path, into: Path) -> Path:
    with zipfile.ZipFile(data) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
        assert len(tops) == 1, tops
        archive.extractall(into)
    return into / tops.pop()


@pytest.fixture
def org(env: Settings, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]) -> str:
    org_id = str(uuid.uuid4())
    assert main(["orgs", "create", "--name", "Ateliê Interop", "--id", org_id]) == 0
    capsys.readouterr()
    return org_id


def _import(capsys: pytest.CaptureFixture[str], org: str, path: Path) -> tuple[int, dict[str, Any]]:
    return _run(capsys, "skills", "import", str(path), "--org", org)


def _export_and_check(
    capsys: pytest.CaptureFixture[str], org: str, name: str, tmp_path: Path
) -> tuple[Path, Path]:
    """Export `name`, validate the unzipped folder, return (zip, folder)."""
    out = tmp_path / f"{name}-export.zip"
    code, exported = _run(capsys, "skills", "export", name, "--org", org, "--out", str(out))
    assert code == 0, exported
    assert exported["name"] == name and exported["bytes"] == out.stat().st_size
    folder = _unzip(out, tmp_path / f"{name}-unzipped")
    assert folder.name == name
    _validate(folder)
    return out, folder


def test_public_layouts_import_export_validate_and_reimport_unchanged(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for layout in (document_toolkit, webapp_tester):
        files = layout()
        package = tmp_path / "upload.zip"
        package.write_bytes(zip_files({f"repo-folder/{p}": d for p, d in files.items()}))
        code, imported = _import(capsys, org, package)
        assert code == 0 and imported["status"] == "imported", imported
        name = imported["name"]

        out, folder = _export_and_check(capsys, org, name, tmp_path)
        exported_files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file()
        }
        assert exported_files == files  # SKILL.md byte for byte, every file at its path
        code, again = _import(capsys, org, out)
        assert (code, again["status"], again["version_id"]) == (
            0,
            "unchanged",
            imported["version_id"],
        )


async def test_spec_fields_and_kinds_are_stored_with_the_version(
    org: str, tmp_path: Path, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    text = spec_skill_md(
        "frete-interop",
        keywords="frete, prazo de entrega",
        probes="envio",
        extra={"compatibility": "WhatsApp", "allowed-tools": "read_skill_reference"},
    )
    package = tmp_path / "frete.zip"
    package.write_bytes(
        zip_files({"SKILL.md": text, "LICENSE.txt": "MIT", "scripts/calc.py": "print(1)"})
    )
    assert await asyncio.to_thread(main, ["skills", "import", str(package), "--org", org]) == 0
    capsys.readouterr()
    version = await fetch_org_pointed_version(db, uuid.UUID(org), "frete-interop")
    assert version is not None
    assert version.skill_md == text.encode()
    assert version.matcher == SkillMatcher(["frete", "prazo de entrega"], ["envio"])
    assert version.frontmatter == SkillFrontmatter(
        license="Complete terms in LICENSE.txt",
        compatibility="WhatsApp",
        allowed_tools="read_skill_reference",
    )
    assert {(e.path, e.kind) for e in version.manifest} == {
        ("LICENSE.txt", FileKind.REFERENCE),
        ("scripts/calc.py", FileKind.SCRIPT),
    }


def test_the_largest_shape_needs_the_limits_raised(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "fontes.zip"
    package.write_bytes(zip_files(font_gallery()))
    assert main(["skills", "import", str(package), "--org", org]) == 1
    assert capsys.readouterr().err.startswith("error: skill_too_many_files")

    monkeypatch.setenv("SKILLET_PACKAGE_MAX_FILES", "128")
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_BYTES", str(8 * 1024 * 1024))
    code, imported = _import(capsys, org, package)
    assert code == 0 and imported["status"] == "imported", imported
    out, _ = _export_and_check(capsys, org, "design-em-tela", tmp_path)
    assert _import(capsys, org, out)[1]["status"] == "unchanged"


def test_every_test_layout_imports_with_raised_limits(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_FILES", "128")
    monkeypatch.setenv("SKILLET_PACKAGE_MAX_BYTES", str(8 * 1024 * 1024))
    for name, layout in PUBLIC_LAYOUTS.items():
        package = tmp_path / f"{name}.zip"
        package.write_bytes(zip_files(layout()))
        code, imported = _import(capsys, org, package)
        assert (code, imported.get("name")) == (0, name), imported


def test_catalog_install_exports_the_catalog_bytes(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "seed"]) == 0
    assert main(["skills", "install", "agendamento", "--org", org]) == 0
    capsys.readouterr()
    out, folder = _export_and_check(capsys, org, "agendamento", tmp_path)
    catalog = DEFAULT_CATALOG_DIR / "agendamento"
    assert (folder / "SKILL.md").read_bytes() == (catalog / "SKILL.md").read_bytes()
    code, again = _import(capsys, org, out)
    assert (code, again["status"]) == (0, "unchanged")


def test_a_legacy_matcher_upload_exports_in_the_spec_form(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "legado.zip"
    package.write_bytes(
        skill_zip(
            "legado", keywords=["frete", "sim, quero"], probes=["envio"], references={"a.md": "A"}
        )
    )
    code, _ = _import(capsys, org, package)
    assert code == 0
    out, folder = _export_and_check(capsys, org, "legado", tmp_path)
    text = (folder / "SKILL.md").read_text()
    assert "matcher" not in text and "skillet-keywords: frete, sim quero" in text
    # The comma inside a legacy keyword became a space: same matching, different content.
    assert _import(capsys, org, out)[1]["status"] == "imported"
    (tmp_path / "again").mkdir()
    out, _ = _export_and_check(capsys, org, "legado", tmp_path / "again")
    assert _import(capsys, org, out)[1]["status"] == "unchanged"


async def test_a_version_from_before_0019_exports_and_reimports_unchanged(
    org: str, tmp_path: Path, db: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    """No SKILL.md bytes stored: the export is rendered, and "unchanged" compares content."""
    version_id = uuid.uuid4()
    await insert_skill_version(
        db,
        version_id=version_id,
        organization_id=uuid.UUID(org),
        name="antiga",
        description="Uma skill de antes: responde sobre trocas.",
        body="Explique a política de trocas.",
        matcher=SkillMatcher(["troca", "devolução"], ["defeito"]),
        created_by="user",
    )
    await upsert_skill_pointer(db, uuid.UUID(org), "antiga", version_id)
    out, folder = await asyncio.to_thread(_export_and_check, capsys, org, "antiga", tmp_path)
    assert "skillet-probe-keywords: defeito" in (folder / "SKILL.md").read_text()
    code, again = await asyncio.to_thread(_import, capsys, org, out)
    assert (code, again["status"], again["version_id"]) == (0, "unchanged", str(version_id))


def test_export_of_a_skill_not_installed_is_a_one_line_error(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nada.zip"
    assert main(["skills", "export", "nada", "--org", org, "--out", str(out)]) == 1
    assert capsys.readouterr().err.startswith("error: skill_not_installed")
    assert not out.exists()


async def test_imported_files_are_readable_by_kind_through_the_tools(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    files = document_toolkit("documentos", scripts=3)
    files["SKILL.md"] = spec_skill_md("documentos", keywords="documento, contrato").encode()
    files["fontes/logo.ttf"] = b"\xff\x00fonte"
    await import_skill_package(db, resources.store, organization_id=org, data=zip_files(files))
    installed = await list_installed_skills(db, org)
    context = reference_context(resources.store, org, installed)
    assert installed[0].reference_paths == ("LICENSE.txt", "editing.md", "reference.md")

    reference = await read_reference(context, "documentos", "reference.md")
    assert (reference.error_code, reference.content) == (None, files["reference.md"].decode())
    script = await read_reference(context, "documentos", "scripts/tool_00.py")
    assert script.error_code == "reference_not_found"

    async def view(path: str) -> str:
        call = ToolCall("c1", "skill_view", {"name": "documentos", "file_path": path})
        result = await default_registry().execute(context, call)
        assert result.error_code is None, result.content
        return result.content

    assert await view("scripts/tool_00.py") == files["scripts/tool_00.py"].decode()
    assert await view("scripts/templates/comments.xml") == "<comments/>\n"
    assert "arquivo binário" in await view("fontes/logo.ttf")


def test_yaml_the_validator_cannot_read_is_exported_rendered_and_reimports_unchanged(
    org: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "---\nname: fluxo\ndescription: Skill com YAML em estilo de fluxo.\n"
        "metadata: {author: loja, skillet-keywords: 'frete, cep'}\n"
        "allowed-tools: [read_skill_reference, skill_view]\n---\nCorpo.\n"
    )
    package = tmp_path / "fluxo.zip"
    package.write_bytes(zip_files({"SKILL.md": text}))
    code, imported = _import(capsys, org, package)
    assert code == 0
    out, folder = _export_and_check(capsys, org, "fluxo", tmp_path)
    assert (folder / "SKILL.md").read_text() != text
    code, again = _import(capsys, org, out)
    assert (code, again["status"], again["version_id"]) == (
        0,
        "unchanged",
        imported["version_id"],
    )
