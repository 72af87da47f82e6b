"""The platform catalog and the test layouts pass the Agent Skills reference validator
(`skills-ref`, run as its `agentskills validate` command), as a user's tools would run it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skills.catalog_seed import DEFAULT_CATALOG_DIR, catalog_folders
from tests.agentskills_layouts import PUBLIC_LAYOUTS

VALIDATOR = Path(sys.executable).with_name("agentskills")


def validate(folder: Path) -> subprocess.CompletedProcess[str]:
    assert VALIDATOR.is_file(), "skills-ref is in the dev extra: pip install -e '.[dev]'"
    return subprocess.run(
        [str(VALIDATOR), "validate", str(folder)], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("folder", catalog_folders(DEFAULT_CATALOG_DIR), ids=lambda p: p.name)
def test_catalog_packages_pass_the_spec_validator(folder: Path) -> None:
    result = validate(folder)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(PUBLIC_LAYOUTS))
def test_the_test_layouts_are_valid_skills(name: str, tmp_path: Path) -> None:
    folder = tmp_path / name
    for path, data in PUBLIC_LAYOUTS[name]().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    result = validate(folder)
    assert result.returncode == 0, result.stderr


def test_the_validator_refuses_our_legacy_matcher(tmp_path: Path) -> None:
    """Why the catalog moved its keywords to metadata: `matcher` is not a spec field."""
    folder = tmp_path / "objecao-preco"
    shutil.copytree(DEFAULT_CATALOG_DIR / "objecao-preco", folder)
    text = (folder / "SKILL.md").read_text()
    (folder / "SKILL.md").write_text(
        text.replace("metadata:\n", "matcher:\n  any_keywords:\n    - caro\nmetadata:\n", 1)
    )
    result = validate(folder)
    assert result.returncode == 1 and "matcher" in result.stderr
