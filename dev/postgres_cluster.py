"""A private PostgreSQL cluster for `skillet dev up`: initdb, pg_ctl start/stop, its OS user.

PostgreSQL refuses to run as root, so as root the cluster belongs to an unprivileged user:
`postgres` for the system's binaries (the distribution package creates it), and
`skillet-postgres` for the embedded wheel's, created here when missing. Auth is trust over
loopback TCP only (no Unix socket): a development server.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path
from typing import Any

from dev.processes import COMMAND_TIMEOUT_S, DevServicesError, run_command

EMBEDDED_USER = "skillet-postgres"
_USERADD_EXISTS = 9  # useradd's exit code for "user already exists" (another `up` raced us)


def run_as_prefix(user: str | None) -> list[str]:
    return [] if user is None else ["runuser", "-u", user, "--"]


def cluster_user(preferred: str) -> str | None:
    """Who runs the cluster: nobody special unless we are root, then `preferred`."""
    if os.geteuid() != 0:
        return None
    if shutil.which("runuser") is None:
        raise DevServicesError(f"running as root needs `runuser` to start postgres as {preferred}")
    return preferred


def ensure_system_user(name: str) -> None:
    """Create an unprivileged system user with no home and no shell, unless it exists."""
    try:
        pwd.getpwnam(name)
        return
    except KeyError:
        pass
    if shutil.which("useradd") is None:
        raise DevServicesError(f"no `useradd` to create user {name}: create it, or run as non-root")
    argv = ["useradd", "--system", "--user-group", "--no-create-home"]
    argv += ["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DevServicesError(f"useradd {name} failed: {exc}") from exc
    if done.returncode not in (0, _USERADD_EXISTS):
        raise DevServicesError(f"useradd {name} failed: {' '.join(done.stderr.split())[-300:]}")


def _check_reachable(user: str, bindir: Path, base: Path) -> None:
    """The cluster's user must run the binaries and write its folder: say which fails."""
    for test, path in (("-x", bindir / "postgres"), ("-w", base)):
        argv = [*run_as_prefix(user), "test", test, str(path)]
        try:
            done = subprocess.run(argv, capture_output=True, timeout=COMMAND_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DevServicesError(f"cannot check what {user} may use: {exc}") from exc
        if done.returncode != 0:
            raise DevServicesError(
                f"user {user} cannot use {path}: let others enter its parent folders "
                "(chmod o+x) or set SKILLET_DEV_DIR to a folder they can"
            )


def start_cluster(
    bindir: Path, base: Path, host: str, port: int, run_as: str | None
) -> dict[str, Any]:
    """initdb (once) and `pg_ctl start` of the cluster in `base/data`; the state record."""
    data = base / "data"
    base.mkdir(parents=True, exist_ok=True)
    if run_as is not None:
        shutil.chown(base, user=run_as)
        _check_reachable(run_as, bindir, base)
    prefix = run_as_prefix(run_as)
    if not (data / "PG_VERSION").exists():
        initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        run_command([*prefix, *initdb, "-E", "UTF8", "--no-locale"], "initdb")
    options = f"-p {port} -c listen_addresses={host} -c unix_socket_directories=''"
    pg_ctl = str(bindir / "pg_ctl")
    log = str(base / "postgres.log")
    start = [*prefix, pg_ctl, "-D", str(data), "-l", log, "-w", "-o", options, "start"]
    run_command(start, "pg_ctl")
    return {"kind": "pg_ctl", "pg_ctl": pg_ctl, "data_dir": str(data), "run_as": run_as}


def stop_cluster(record: dict[str, Any]) -> None:
    """`pg_ctl stop -m fast` of a cluster `start_cluster` recorded."""
    prefix = run_as_prefix(record.get("run_as"))
    run_command(
        [*prefix, record["pg_ctl"], "-D", record["data_dir"], "-m", "fast", "stop"], "pg_ctl"
    )
