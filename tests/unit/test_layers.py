"""The layer order is declared once (pyproject.toml's `layers` contract, enforced by
`lint-imports`) and stated in the README: the two say the same, and every package is in it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _contract() -> dict[str, object]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
    return {"root_packages": config["root_packages"], "layers": layers["layers"]}


def _readme_layers() -> list[str]:
    readme = (REPO / "README.md").read_text()
    block = re.search(
        r"<!-- layers: top to bottom -->\n```\n(.*?)```\n<!-- /layers -->", readme, re.S
    )
    assert block is not None, "README's Layout section lost its layer list"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_states_the_contracts_order() -> None:
    assert _readme_layers() == _contract()["layers"]


def test_every_package_has_a_layer() -> None:
    layered = {name.strip() for layer in _contract()["layers"] for name in layer.split("|")}  # type: ignore[attr-defined]
    on_disk = {p.parent.name for p in REPO.glob("*/__init__.py")} - {
        "tests",
        "bench",
        "tools",
        "skillet_data",
    }
    assert layered == on_disk
    assert set(_contract()["root_packages"]) == on_disk  # type: ignore[arg-type]


def test_no_module_imports_itself_back() -> None:
    # Files too, not only packages: two modules that reach each other (through any chain,
    # type-checking imports included) are one idea split in two, or one in the wrong place.
    import grimp  # import-linter's graph

    graph = grimp.build_graph(*_contract()["root_packages"])  # type: ignore[misc]
    circles = [
        (module, other)
        for module in sorted(graph.modules)
        for other in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=other, imported=module)
    ]
    assert circles == []
