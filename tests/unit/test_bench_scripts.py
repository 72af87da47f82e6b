"""Every bench script, run by its path, imports `_script` before any package of ours: else a
script named like a package (bench/consolidation.py, the `consolidation` package) shadows it."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OURS = {
    *tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"],
    "bench",
}
BENCH = REPO / "bench"


def _top_level_imports(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module.split(".")[0])
    return names


def test_each_bench_script_keeps_bench_off_the_path_before_importing_ours() -> None:
    scripts = [p for p in sorted(BENCH.glob("*.py")) if not p.name.startswith("_")]
    assert scripts
    late = []
    for path in scripts:
        imports = _top_level_imports(path)
        first_ours = next((i for i, name in enumerate(imports) if name in OURS), None)
        if first_ours is not None and "_script" not in imports[:first_ours]:
            late.append(path.name)
    assert late == []
