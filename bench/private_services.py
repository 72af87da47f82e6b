"""Servers a bench owns alone: a Redis and a PostgreSQL it may wipe, restart and stop
without touching the machine's shared ones (other engineers' test runs use those).

PostgreSQL comes from the system's binaries (/usr/lib/postgresql/*/bin, the newest), in a
fresh data directory on a free loopback port with trust auth. Postgres refuses to run as
root, so under root every server command runs as `nobody` (runuser), which owns the data
directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import _script  # noqa: F401  (first: keeps bench/ off sys.path)

from dev.processes import free_port

POSTGRES_BIN_GLOB = "/usr/lib/postgresql/*/bin"
UNPRIVILEGED_USER = "nobody"  # who runs postgres when the bench runs as root
START_TIMEOUT_S = 60
WAIT = ("-w", "-t", str(START_TIMEOUT_S))
INITDB_OPTIONS = ("--auth=trust", "-E", "UTF8", "--no-sync")  # no fsync of the empty cluster
REDIS_NO_PERSISTENCE = ("--save", "", "--appendonly", "no")


def _postgres_bin() -> Path:
    found = sorted(Path("/").glob(POSTGRES_BIN_GLOB.lstrip("/")), key=_version_key)
    if not found:
        raise SystemExit(f"no PostgreSQL binaries under {POSTGRES_BIN_GLOB}")
    return found[-1]


def _version_key(path: Path) -> tuple[int, str]:
    version = path.parent.name
    return (int(version) if version.isdigit() else 0, version)


@dataclass
class PrivatePostgres:
    """A running cluster of the bench's own; `url` reaches its `postgres` superuser."""

    data_dir: Path
    port: int
    bin_dir: Path

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def restart(self) -> None:
        """A clean restart (fast shutdown: every connection is cut), as a failover would."""
        log = str(self.data_dir.parent / "postgres.log")
        self._pg_ctl("restart", "-m", "fast", "-l", log, *WAIT)

    def stop(self) -> None:
        """Stop it and delete its data directory."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self._pg_ctl("stop", "-m", "immediate", "-w")
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)

    def _pg_ctl(self, *args: str) -> None:
        _run_as_owner([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), *args])


def start_private_postgres() -> PrivatePostgres:
    """initdb into a fresh temporary directory and start it; the caller stops it (`stop`)."""
    bin_dir = _postgres_bin()
    # Its own directory under the system's temp dir, so `nobody` can reach it.
    directory = Path(tempfile.mkdtemp(prefix="skillet-bench-pg-"))
    data_dir = directory / "pgdata"
    data_dir.mkdir()
    if os.geteuid() == 0:
        shutil.chown(directory, UNPRIVILEGED_USER)
        shutil.chown(data_dir, UNPRIVILEGED_USER)
    try:
        _run_as_owner(
            [str(bin_dir / "initdb"), "-D", str(data_dir), "-U", "postgres", *INITDB_OPTIONS]
        )
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    port = free_port()
    options = f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={data_dir}"
    server = PrivatePostgres(data_dir, port, bin_dir)
    log = directory / "postgres.log"
    try:
        _run_as_owner(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data_dir),
                "-o",
                options,
                "-l",
                str(log),
                *WAIT,
                "start",
            ]
        )
    except BaseException:
        server.stop()
        raise
    return server


def _run_as_owner(command: Sequence[str]) -> None:
    if os.geteuid() == 0:
        command = ["runuser", "-u", UNPRIVILEGED_USER, "--", *command]
    # No pipes: the server pg_ctl starts would inherit them and keep them open.
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_private_redis(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A Redis of the bench's own on a free port (no persistence); the caller terminates it."""
    port = free_port()
    process = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            *REDIS_NO_PERSISTENCE,
            "--dir",
            str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            return process, port
        time.sleep(0.05)
    process.kill()
    raise SystemExit("redis-server did not start")
