"""The built wheel on its own: installed into a fresh venv, it migrates and seeds the catalog.

The wheel is built from a copy of the source (so the worktree gets no build/ or egg-info) and
installed with --no-deps into a venv made in a temp dir. Third-party dependencies come from
this test's own site-packages through PYTHONPATH; skillet's own packages must come from the
wheel, which the test checks (`worker.__file__` under the new venv, run from a temp cwd).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from core.db import with_database
from dev.weed import WeedProcess
from tests.integration.conftest import ADMIN_DATABASE_URL, REDIS_URL, S3_ACCESS_KEY, S3_SECRET_KEY
from worker.migrate import DEFAULT_MIGRATIONS_DIR, load_migrations

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
# Not part of a build: the venv, VCS data, local state and caches (also in .dockerignore).
_NOT_SOURCE = shutil.ignore_patterns(
    ".venv", ".git", ".skillet", "build", "dist", "*.egg-info", "__pycache__", ".*_cache"
)
STEP_TIMEOUT_S = 120


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S
    )
    assert done.returncode == 0, f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def empty_database_url() -> Iterator[str]:
    name = f"skillet_wheel_{uuid.uuid4().hex[:10]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(ADMIN_DATABASE_URL)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'create database "{name}"'))
    yield with_database(ADMIN_DATABASE_URL, name)
    asyncio.run(admin(f'drop database if exists "{name}" with (force)'))


@pytest.fixture
def installed_venv(tmp_path: Path) -> Path:
    """A fresh venv holding only the wheel built from this source."""
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", str(source), "--no-deps", "-w", str(wheels)], cwd=tmp_path)
    (wheel,) = wheels.glob("skillet-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    _run([*pip, "--python", str(python), "install", "--no-deps", str(wheel)], cwd=tmp_path)
    return venv


def _skillet_env(venv: Path, database_url: str, s3: WeedProcess) -> dict[str, str]:
    return {
        "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": os.environ.get("HOME", "/tmp"),
        # The dependencies only; .pth files (our editable install) are not read from here.
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "S3_ENDPOINT_URL": s3.endpoint_url,
        "S3_BUCKET": f"skillet-wheel-{uuid.uuid4().hex[:8]}",
        "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
    }


def _json(stdout: str) -> Any:
    return json.loads(stdout.strip().splitlines()[-1])


def test_the_installed_wheel_migrates_and_seeds(
    installed_venv: Path, empty_database_url: str, s3_server: WeedProcess, tmp_path: Path
) -> None:
    env = _skillet_env(installed_venv, empty_database_url, s3_server)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    where = _json(
        _run(
            [
                str(installed_venv / "bin" / "python"),
                "-c",
                "import json, worker, skillet_data; "
                "from turn.matcher.intent_model import shipped_intent_models as m; "
                "print(json.dumps([worker.__file__, str(skillet_data.MIGRATIONS_DIR), "
                "str(skillet_data.FUNCTIONS_SQL), sorted(s for s, _ in m())]))",
            ],
            cwd=cwd,
            env=env,
        )
    )
    *paths, intent_models = where
    assert all(Path(p).is_relative_to(installed_venv) for p in paths), where
    assert Path(paths[-1]).is_file()  # functions.sql ships: the SQL the database runs, to read
    assert intent_models == ["agendamento", "objecao-preco"]  # the catalog's models ship too

    skillet = str(installed_venv / "bin" / "skillet")
    migrated = _json(_run([skillet, "migrate", "--json"], cwd=cwd, env=env))
    expected = [f"{m.version:04d}_{m.name}" for m in load_migrations(DEFAULT_MIGRATIONS_DIR)]
    assert migrated["applied"] == expected

    seeded = _json(_run([skillet, "catalog", "seed", "--json"], cwd=cwd, env=env))
    assert [(s["name"], s["status"]) for s in seeded["seeded"]] == [
        ("agendamento", "imported"),
        ("objecao-preco", "imported"),
    ]
