"""Service URLs of the dev services, pure: endpoints, loopback checks, database names."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from core.db import with_database
from dev.processes import DevServicesError
from worker.settings import Settings, mask_password

_DEFAULT_PORTS = {"postgresql": 5432, "postgres": 5432, "redis": 6379, "rediss": 6379}
_DEFAULT_PORTS |= {"http": 80, "https": 443}
_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1", ""}


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
        raise DevServicesError(f"no port in {mask_password(url)} and no default for its scheme")
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
    return with_database(database_url, "postgres")


def cluster_port(postgresql_conf: str) -> int:
    """The port a Debian cluster's postgresql.conf sets (5432 when it sets none)."""
    match = re.search(r"^\s*port\s*=\s*(\d+)", postgresql_conf, flags=re.MULTILINE)
    return int(match.group(1)) if match else 5432


def embedded_url(service: str, settings: Settings, port: int) -> str:
    """The URL of a forced embedded server on `port` of loopback (trust auth, no password)."""
    if service == "postgres":
        return f"postgresql://postgres@127.0.0.1:{port}/{database_name(settings.database_url)}"
    if service == "redis":
        return f"redis://127.0.0.1:{port}/0"
    return f"http://127.0.0.1:{port}"
