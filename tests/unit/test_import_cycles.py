"""Every module of the packages imports on its own, first: no import cycle hides behind the
order in which the processes happen to import them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Every package of the layer contract (pyproject.toml), and the data package.
PACKAGES = (
    *tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"],
    "skillet_data",
)

# One interpreter: before each import, every module of ours is forgotten, so each one is the
# first of its process (a cycle then fails as "partially initialized module").
_PROBE = """
import importlib, sys
ours = tuple(sys.argv[1].split(","))
failed = []
for name in sys.argv[2:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ours]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failed.append(f"{name}: {exc}")
print("\\n".join(failed))
"""


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_each_module_imports_first() -> None:
    modules = _modules()
    assert "turn.matcher.training" in modules and "keywords.words" in modules
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, ",".join(PACKAGES), *modules],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=True,
    )
    assert probe.stdout.strip() == ""
