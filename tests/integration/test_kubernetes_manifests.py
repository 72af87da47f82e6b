"""deploy/kubernetes/ as a cluster would take it: every manifest passes kubernetes-validate's
strict schemas (shipped in its wheel, no network) for the Kubernetes versions we target, and
the manifests keep the contracts the code sets: probes on the worker's ops port, a grace
period above the drain, one database user per process, an HPA on the real queue gauge."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from worker.metrics import WorkerMetrics
from worker.ops_server import SHUTDOWN_TIMEOUT_S
from worker.settings import Settings

REPO = Path(__file__).resolve().parents[2]
MANIFESTS = REPO / "deploy/kubernetes"
# The oldest minor we support and the newest whose schemas kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
APPS = ("worker", "webhook", "api")
DB_PASSWORDS = {app: f"SKILLET_{app.upper()}_DB_PASSWORD" for app in APPS}
_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def manifest_files() -> list[Path]:
    return sorted(MANIFESTS.rglob("*.yaml"))


def validate(path: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "kubernetes_validate", "--strict"]
    for version in KUBERNETES_VERSIONS:
        args += ["-k", version]
    return subprocess.run(
        [*args, str(path)], capture_output=True, text=True, timeout=120, check=False
    )


def resources_in(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _assert_valid(path: Path) -> None:
    done = validate(path)
    lines = done.stdout.splitlines()
    # An unknown kind or apiVersion is only a WARN with exit 0: refuse it here.
    assert done.returncode == 0 and not any(not line.startswith("INFO") for line in lines), (
        done.stdout + done.stderr
    )
    passed = [line for line in lines if " passed for resource " in line]
    assert len(passed) == len(resources_in(path)) * len(KUBERNETES_VERSIONS), done.stdout


@pytest.fixture(scope="module")
def resources() -> dict[tuple[str, str], dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in manifest_files():
        for resource in resources_in(path):
            key = (resource["kind"], resource["metadata"]["name"])
            assert key not in found, f"{key} defined twice"
            found[key] = resource
    return found


def test_the_manifests_are_all_there() -> None:
    names = {path.relative_to(MANIFESTS).as_posix() for path in manifest_files()}
    assert {
        "configmap.yaml",
        "migrate-job.yaml",
        "worker.yaml",
        "worker-hpa.yaml",
        "webhook.yaml",
        "api.yaml",
        "examples/secret.yaml",
    } <= names


@pytest.mark.parametrize(
    "path", manifest_files(), ids=lambda p: p.relative_to(MANIFESTS).as_posix()
)
def test_manifest_passes_strict_validation(path: Path) -> None:
    _assert_valid(path)


def test_an_unknown_field_is_refused(tmp_path: Path) -> None:
    worker = (MANIFESTS / "worker.yaml").read_text()
    broken = tmp_path / "worker.yaml"
    broken.write_text(worker.replace("terminationGracePeriodSeconds", "terminationGraceSeconds"))
    done = validate(broken)
    assert done.returncode != 0
    assert "terminationGraceSeconds" in done.stdout


def test_an_unknown_kind_is_refused(tmp_path: Path) -> None:
    strange = tmp_path / "monitor.yaml"
    strange.write_text("apiVersion: example.com/v1\nkind: PodWatcher\nmetadata:\n  name: x\n")
    with pytest.raises(AssertionError, match="WARN"):
        _assert_valid(strange)


def namespaced_nowhere(resource: dict[str, Any]) -> bool:
    return "namespace" not in resource["metadata"]


def test_manifests_name_no_namespace(resources: dict[tuple[str, str], dict[str, Any]]) -> None:
    # `kubectl apply -n NAME -f deploy/kubernetes/` puts them where the operator says.
    assert all(namespaced_nowhere(resource) for resource in resources.values())


def pod_spec(resource: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = resource["spec"]["template"]["spec"]
    return spec


def workloads(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> Iterator[tuple[str, dict[str, Any]]]:
    for (kind, name), resource in resources.items():
        if kind in ("Deployment", "Job"):
            yield name, resource


def env_of(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def only_container(resource: dict[str, Any]) -> dict[str, Any]:
    [container] = pod_spec(resource)["containers"]
    assert isinstance(container, dict)
    return container


def dockerfile_uid() -> int:
    match = re.search(r"useradd [^\n]*--uid (\d+)", (REPO / "Dockerfile").read_text())
    assert match, "the Dockerfile creates no user with a fixed uid"
    return int(match.group(1))


def test_every_pod_runs_as_the_image_user_without_privileges(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    uid = dockerfile_uid()
    for name, resource in workloads(resources):
        spec = pod_spec(resource)
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["runAsUser"] == uid, name
        assert spec["automountServiceAccountToken"] is False, name
        container = only_container(resource)
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False, name
        assert security["readOnlyRootFilesystem"] is True, name
        assert security["capabilities"]["drop"] == ["ALL"], name
        assert container["resources"]["requests"]["memory"], name
        assert container["resources"]["limits"]["memory"], name


def test_every_reference_in_an_env_value_is_defined_before_it(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """Kubernetes leaves an unknown `$(VAR)` in the value as it is: a URL with `$(...)` in it."""
    config = resources[("ConfigMap", "skillet-config")]["data"]
    for name, resource in workloads(resources):
        container = only_container(resource)
        defined: set[str] = set()
        for source in container.get("envFrom", []):
            assert source["configMapRef"]["name"] == "skillet-config", name
            defined |= set(config)
        for entry in container.get("env", []):
            for reference in _REFERENCE.findall(entry.get("value", "")):
                assert reference in defined, f"{name}: {entry['name']} uses $({reference})"
            defined.add(entry["name"])


def test_every_secret_key_is_in_the_example(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    secret = resources[("Secret", "skillet-secrets")]
    keys = set(secret["stringData"])
    for name, resource in workloads(resources):
        for entry in env_of(only_container(resource)).values():
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref is not None:
                assert ref["name"] == "skillet-secrets", name
                assert ref["key"] in keys, f"{name}: {ref['key']} is not in the example"
    # Placeholders only: nothing in the example works as a credential.
    for key, value in secret["stringData"].items():
        assert "REPLACE" in value or ".example.internal" in value, key


@pytest.mark.parametrize("app", APPS)
def test_each_app_logs_in_as_its_own_user(
    resources: dict[tuple[str, str], dict[str, Any]], app: str
) -> None:
    env = env_of(only_container(resources[("Deployment", f"skillet-{app}")]))
    own = DB_PASSWORDS[app]
    assert env[own]["valueFrom"]["secretKeyRef"]["key"] == own
    assert env["DATABASE_URL"]["value"] == (
        f"postgresql://skillet_{app}_login:$({own})@$(DATABASE_HOST)/$(DATABASE_NAME)"
    )
    others = {password for other, password in DB_PASSWORDS.items() if other != app}
    assert not others & env.keys()
    assert "SKILLET_OWNER_DATABASE_URL" not in env


def test_migrate_job_runs_as_the_owner_with_every_app_password(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    job = resources[("Job", "skillet-migrate")]
    container = only_container(job)
    assert container["args"] == ["migrate"]
    env = env_of(container)
    for name in ("SKILLET_OWNER_DATABASE_URL", *DB_PASSWORDS.values()):
        assert env[name]["valueFrom"]["secretKeyRef"] == {"name": "skillet-secrets", "key": name}
    assert "DATABASE_URL" not in env
    assert pod_spec(job)["restartPolicy"] == "Never"
    assert 0 < job["spec"]["backoffLimit"] <= 10  # retries while Postgres comes up, bounded


def test_worker_probes_use_its_ops_server(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    container = only_container(resources[("Deployment", "skillet-worker")])
    port = int(env_of(container)["SKILLET_METRICS_PORT"]["value"])
    [named] = [p for p in container["ports"] if p["containerPort"] == port]
    liveness = container["livenessProbe"]["httpGet"]
    readiness = container["readinessProbe"]["httpGet"]
    # Liveness on /livez: a Postgres outage makes workers unready, not restarted.
    assert (liveness["path"], liveness["port"]) == ("/livez", named["name"])
    assert (readiness["path"], readiness["port"]) == ("/healthz", named["name"])
    assert container["readinessProbe"]["timeoutSeconds"] > Settings().health_timeout_s


def test_worker_grace_period_outlasts_the_drain(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    worker = resources[("Deployment", "skillet-worker")]
    env = env_of(only_container(worker))
    completion_wait_s = int(env["SKILLET_JOB_COMPLETION_WAIT_S"]["value"])
    drain_s = completion_wait_s + Settings().activation_shutdown_flush_s + SHUTDOWN_TIMEOUT_S
    margin_s = 10
    assert pod_spec(worker)["terminationGracePeriodSeconds"] >= drain_s + margin_s


@pytest.mark.parametrize(
    ("app", "port_setting"), [("webhook", "SKILLET_WEBHOOK_PORT"), ("api", "SKILLET_API_PORT")]
)
def test_services_reach_their_pods(
    resources: dict[tuple[str, str], dict[str, Any]], app: str, port_setting: str
) -> None:
    deployment = resources[("Deployment", f"skillet-{app}")]
    service = resources[("Service", f"skillet-{app}")]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    container = only_container(deployment)
    env = env_of(container)
    [port] = container["ports"]
    assert str(port["containerPort"]) == env[port_setting]["value"]
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [port["name"]]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": port["name"]}


def test_api_listens_beyond_loopback(resources: dict[tuple[str, str], dict[str, Any]]) -> None:
    env = env_of(only_container(resources[("Deployment", "skillet-api")]))
    assert Settings().api_host == "127.0.0.1"  # the default a pod must override
    assert env["SKILLET_API_HOST"]["value"] == "0.0.0.0"


def served_gauge_labels(name: str) -> set[tuple[str, str]]:
    """The label pairs of a worker gauge's samples once the worker has read the queue."""
    metrics = WorkerMetrics()
    metrics.queue_depth(due=3, deferred=1)
    text = generate_latest(metrics.registry).decode()
    for family in text_string_to_metric_families(text):
        if family.name == name:
            assert family.type == "gauge"
            return {pair for sample in family.samples for pair in sample.labels.items()}
    raise AssertionError(f"the worker serves no {name}")


def test_hpa_scales_the_workers_on_the_queue_gauge(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    hpa = resources[("HorizontalPodAutoscaler", "skillet-worker")]
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) in {(k, n) for k, n in resources}
    [metric] = hpa["spec"]["metrics"]
    assert metric["type"] == "External"
    external = metric["external"]
    labels = served_gauge_labels(external["metric"]["name"])
    assert set(external["metric"]["selector"]["matchLabels"].items()) <= labels
    assert external["target"]["type"] == "AverageValue"
    # Jobs per worker the HPA aims at: below what one worker runs at once.
    assert 0 < int(external["target"]["averageValue"]) < Settings().max_jobs
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def test_the_adapter_rule_serves_the_metric_the_hpa_reads(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    values = yaml.safe_load((REPO / "deploy/prometheus-adapter/values.yaml").read_text())
    [rule] = values["rules"]["external"]
    hpa = resources[("HorizontalPodAutoscaler", "skillet-worker")]
    name = hpa["spec"]["metrics"][0]["external"]["metric"]["name"]
    assert rule["name"]["as"] == name
    assert rule["seriesQuery"].startswith(name + "{")
    assert rule["metricsQuery"].startswith("max(")  # one shared queue, seen by every worker


def test_every_workload_runs_the_same_image(
    resources: dict[tuple[str, str], dict[str, Any]],
) -> None:
    images = {only_container(resource)["image"] for _, resource in workloads(resources)}
    assert len(images) == 1
