"""The pure parts of the dev services launcher: URLs, ports, command lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.db import quote_ident
from dev.processes import DevServicesError
from dev.services import redis_argv, up
from dev.urls import (
    Endpoint,
    admin_database_url,
    bind_host,
    cluster_port,
    database_name,
    endpoint_of,
    is_local,
)
from dev.weed import WeedPorts, weed_argv
from worker.settings import Settings
from worker.settings import mask_password as redact_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://postgres@127.0.0.1:5432/skillet", Endpoint("127.0.0.1", 5432)),
        ("postgresql://u:p@db.internal/skillet", Endpoint("db.internal", 5432)),
        ("postgres://localhost:6543/x", Endpoint("localhost", 6543)),
        ("redis://127.0.0.1:6380/0", Endpoint("127.0.0.1", 6380)),
        ("redis://localhost", Endpoint("localhost", 6379)),
        ("rediss://:secret@cache.example.com/1", Endpoint("cache.example.com", 6379)),
        ("http://127.0.0.1:8333", Endpoint("127.0.0.1", 8333)),
        ("https://s3.us-east-1.amazonaws.com", Endpoint("s3.us-east-1.amazonaws.com", 443)),
        ("http://[::1]:8333", Endpoint("::1", 8333)),
    ],
)
def test_endpoint_of(url: str, expected: Endpoint) -> None:
    assert endpoint_of(url) == expected


def test_endpoint_of_refuses_unknown_scheme_without_port() -> None:
    with pytest.raises(DevServicesError, match="no port"):
        endpoint_of("ftp://files.example.com/")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.1.1", "localhost", "::1"])
def test_loopback_hosts_are_local(host: str) -> None:
    assert is_local(host)


@pytest.mark.parametrize("host", ["db.internal", "10.0.0.5", "s3.amazonaws.com"])
def test_other_hosts_are_not_local(host: str) -> None:
    assert not is_local(host)


def test_bind_host_turns_names_into_addresses() -> None:
    assert bind_host("localhost") == "127.0.0.1"
    assert bind_host("127.0.0.1") == "127.0.0.1"
    assert bind_host("::1") == "::1"


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("postgresql://postgres@127.0.0.1:5432/skillet", "skillet"),
        ("postgresql://postgres@127.0.0.1/my%20db?sslmode=disable", "my db"),
        ("postgresql://alice@127.0.0.1:5432", "alice"),
        ("postgresql://127.0.0.1:5432/", "postgres"),
    ],
)
def test_database_name(url: str, name: str) -> None:
    assert database_name(url) == name


def test_admin_database_url_keeps_server_user_and_options() -> None:
    url = "postgresql://bob:pw@127.0.0.1:5433/skillet?sslmode=disable"
    assert admin_database_url(url) == "postgresql://bob:pw@127.0.0.1:5433/postgres?sslmode=disable"


def test_redact_url_hides_only_the_password() -> None:
    assert redact_url("redis://:hunter2@h:6379/0") == "redis://:***@h:6379/0"
    assert redact_url("postgresql://u:p%40ss@h/db") == "postgresql://u:***@h/db"
    assert redact_url("http://127.0.0.1:8333") == "http://127.0.0.1:8333"


def test_quote_ident_doubles_quotes() -> None:
    assert quote_ident("skillet") == '"skillet"'
    assert quote_ident('a"b') == '"a""b"'


def test_cluster_port_reads_postgresql_conf() -> None:
    conf = "# port = 1\nlisten_addresses = 'localhost'\nport = 5433\t\t# restart\n"
    assert cluster_port(conf) == 5433
    assert cluster_port("# nothing set\n") == 5432


def test_weed_ports_keep_s3_port_and_pick_distinct_others() -> None:
    ports = WeedPorts.pick(18333)
    values = list(vars(ports).values())
    assert ports.s3 == 18333
    assert len(set(values)) == len(values) == 10
    assert all(0 < port < 65536 for port in values)


def test_weed_argv_sets_every_listener_and_puts_logdir_before_mini(tmp_path: Path) -> None:
    ports = WeedPorts(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    argv = weed_argv("/venv/bin/weed", tmp_path, "127.0.0.1", ports)
    assert argv[:3] == ["/venv/bin/weed", f"-logdir={tmp_path / 'log'}", "mini"]
    flags = dict(arg.lstrip("-").split("=", 1) for arg in argv[3:])
    assert flags["s3.port"] == "1"
    assert flags["s3.port.grpc"] == "2"
    assert flags["master.port"] == "3"
    assert flags["master.port.grpc"] == "4"
    assert flags["volume.port"] == "5"
    assert flags["volume.port.grpc"] == "6"
    assert flags["filer.port"] == "7"
    assert flags["filer.port.grpc"] == "8"
    assert flags["admin.port"] == "9"
    assert flags["admin.port.grpc"] == "10"
    assert flags["s3.port.iceberg"] == flags["s3.port.lance"] == "0"
    assert flags["ip.bind"] == "127.0.0.1"
    assert flags["dir"] == str(tmp_path / "data")
    assert flags["master.telemetry"] == "false"


def test_redis_argv_is_loopback_and_not_persistent(tmp_path: Path) -> None:
    argv = redis_argv("redis-server", Endpoint("localhost", 6390), tmp_path, None)
    assert argv[:4] == ["redis-server", "--bind", "127.0.0.1", "-::1"]
    assert argv[argv.index("--port") + 1] == "6390"
    assert argv[argv.index("--save") + 1] == ""
    assert argv[argv.index("--appendonly") + 1] == "no"
    assert argv[argv.index("--daemonize") + 1] == "no"
    assert "--requirepass" not in argv


def test_redis_argv_requires_the_urls_password(tmp_path: Path) -> None:
    argv = redis_argv("redis-server", Endpoint("127.0.0.1", 6390), tmp_path, "pw")
    assert argv[-2:] == ["--requirepass", "pw"]


async def test_up_refuses_unknown_services_before_touching_anything(tmp_path: Path) -> None:
    settings = Settings(dev_dir=str(tmp_path / "dev"))
    with pytest.raises(DevServicesError, match="mysql"):
        await up(settings, services=("postgres", "mysql"))
    assert not (tmp_path / "dev").exists()
