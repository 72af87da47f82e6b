"""Child processes and local ports for the dev services: spawn, watch, stop, run, probe.

DevServicesError lives here, the lowest layer, so `dev.weed` and `dev.services`
share it without importing each other in a cycle.

    SkilletError
    └── DevServicesError    a service could not be found, started, prepared or stopped
"""

from __future__ import annotations

import os
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.errors import SkilletError

READY_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 15.0
POLL_INTERVAL_S = 0.05
COMMAND_TIMEOUT_S = 60.0


class DevServicesError(SkilletError):
    code = "dev_services_failed"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def http_status(host: str, port: int, path: str, *, tls: bool = False) -> int | None:
    """The status code of `GET path`, or None if nothing answers HTTP there."""
    try:
        with socket.create_connection((host, port), PROBE_TIMEOUT_S) as raw:
            context = ssl.create_default_context()
            conn = context.wrap_socket(raw, server_hostname=host) if tls else raw
            conn.sendall(f"GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            first_line = conn.recv(64).split(b"\r\n", 1)[0].split()
    except (OSError, ssl.SSLError):
        return None
    if len(first_line) < 2 or not first_line[0].startswith(b"HTTP/"):
        return None
    return int(first_line[1]) if first_line[1].isdigit() else None


def spawn(argv: Sequence[str], log_path: Path, env: Mapping[str, str]) -> int:
    """Start `argv` in its own session (it outlives us), output appended to `log_path`.

    posix_spawn rather than Popen: a Popen object dropped while its child runs emits a
    ResourceWarning, and these children are meant to outlive the object.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log, open(os.devnull, "rb") as devnull:
        actions = [
            (os.POSIX_SPAWN_DUP2, devnull.fileno(), 0),
            (os.POSIX_SPAWN_DUP2, log.fileno(), 1),
            (os.POSIX_SPAWN_DUP2, log.fileno(), 2),
        ]
        return os.posix_spawn(argv[0], list(argv), dict(env), file_actions=actions, setsid=True)


def exited(pid: int) -> bool:
    """Whether `pid` is gone (or a zombie); reaps it when it is our child."""
    try:
        done_pid, _ = os.waitpid(pid, os.WNOHANG)
        return done_pid == pid
    except ChildProcessError:
        pass  # not our child (an earlier `skillet dev up` started it): init reaps it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _proc_field(pid, "stat").rsplit(")", 1)[-1].split()[:1] == ["Z"]  # a zombie


def _proc_field(pid: int, name: str) -> str:
    """/proc/{pid}/{name} as text ('' without /proc, e.g. on macOS, or once pid is gone)."""
    try:
        return Path(f"/proc/{pid}/{name}").read_text(errors="replace")
    except OSError:
        return ""


def is_running(pid: int, program: str) -> bool:
    """Whether `pid` is alive and still the program we started (pids get reused)."""
    if exited(pid):
        return False
    if not Path("/proc/self").exists():
        return True  # no /proc (macOS): trust the pid
    # comm, not cmdline: redis-server rewrites its argv into a title.
    return _proc_field(pid, "comm").strip() == program[:15]


def terminate(pid: int, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL."""
    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            exited(pid)
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if exited(pid):
                return
            time.sleep(POLL_INTERVAL_S)
    raise DevServicesError(f"process {pid} did not stop")


def run_command(argv: Sequence[str], what: str) -> None:
    """Run a short command; its output goes into the error if it fails."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DevServicesError(f"{what} failed: {exc}") from exc
    if done.returncode != 0:
        output = " ".join((done.stderr or done.stdout).split())[-400:]
        raise DevServicesError(f"{what} failed (exit {done.returncode}): {output}")


def log_tail(path: Path, max_chars: int = 300) -> str:
    """The last `max_chars` of a log file on one line ('' if it cannot be read)."""
    try:
        return " ".join(path.read_text(errors="replace")[-max_chars:].split())
    except OSError:
        return ""
