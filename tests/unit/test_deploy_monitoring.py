"""deploy/'s monitoring config against the code: every metric the Grafana dashboard queries is
one a skillet process serves, and Prometheus scrapes every kind of skillet process.

The names come from the real registries, read the way Prometheus reads them: the worker's
WorkerMetrics, and the `/metrics` handler of the webhook and admin API applications as
`build_app` wires them (nothing is listed by hand). A renamed metric fails here, not on an
operator's empty panel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from api.app import build_app as build_api_app
from api.routing import ApiDeps
from core.http_metrics import METRICS_PATH
from webhook.app import build_app as build_webhook_app
from webhook.config import WebhookConfig
from worker.metrics import WorkerMetrics

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy/grafana/dashboards/skillet.json"
DATASOURCES = REPO / "deploy/grafana/provisioning/datasources/prometheus.yml"
DASHBOARD_PROVIDERS = REPO / "deploy/grafana/provisioning/dashboards/skillet.yml"
PROMETHEUS = REPO / "deploy/prometheus/prometheus.yml"

# Sample names per metric type, as the text format writes them.
SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
    "unknown": ("",),
}
# Series Prometheus writes itself for every target (not in any registry).
SCRAPE_SERIES = {"up": frozenset({"job", "instance"})}
# Labels every scraped series gets from Prometheus, and a histogram bucket's own.
TARGET_LABELS = frozenset({"job", "instance"})
# PromQL's words that are not metric names (only those the dashboard may use).
PROMQL_WORDS = frozenset(
    {
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "topk",
        "bottomk",
        "rate",
        "irate",
        "increase",
        "histogram_quantile",
        "clamp_min",
        "clamp_max",
        "abs",
        "and",
        "or",
        "unless",
        "bool",
        "offset",
    }
)
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
_MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"[^\"]*\"")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def _sample_labels(exposition: str) -> dict[str, frozenset[str]]:
    """Each sample name a process serves -> the label names it carries (target labels too)."""
    served: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(exposition):
        for suffix in SUFFIXES[family.type]:
            served.setdefault(family.name + suffix, set(TARGET_LABELS))
        for sample in family.samples:
            served.setdefault(sample.name, set(TARGET_LABELS)).update(sample.labels)
    return {name: frozenset(labels) for name, labels in served.items()}


async def _app_exposition(app: web.Application) -> str:
    """What GET /metrics of `app` answers, through the handler `build_app` registered."""
    for resource in app.router.resources():
        if resource.canonical == METRICS_PATH:
            for route in resource:
                if route.method == "GET":
                    request = make_mocked_request("GET", METRICS_PATH, app=app)
                    response = await route.handler(request)
                    assert isinstance(response, web.Response) and response.body is not None
                    body = response.body
                    assert isinstance(body, bytes)
                    return body.decode()
    raise AssertionError(f"no GET {METRICS_PATH} route")


@pytest_asyncio.fixture(scope="module")
async def served() -> dict[str, frozenset[str]]:
    """Every sample name of the worker, the webhook and the api, with its label names."""
    worker = WorkerMetrics()
    # One event each, so the labelled histograms that start empty expose their labels too.
    worker.turn_finished("replied", None, 0.1)
    worker.model_called(0.1, None)
    webhook = build_webhook_app(WebhookConfig(), pool=None, queue=None)  # type: ignore[arg-type]
    api = build_api_app(ApiDeps(pool=None, store=None, queue=None, clock=None, usage=None))  # type: ignore[arg-type]
    names: dict[str, frozenset[str]] = dict(SCRAPE_SERIES)
    for exposition in (
        generate_latest(worker.registry).decode(),
        await _app_exposition(webhook),
        await _app_exposition(api),
    ):
        for name, labels in _sample_labels(exposition).items():
            names[name] = names.get(name, frozenset()) | labels
    return names


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def _queries(dashboard: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) of every target, rows' nested panels included."""
    found: list[tuple[str, str]] = []
    for panel in dashboard["panels"]:
        for inner in [panel, *panel.get("panels", [])]:
            for target in inner.get("targets", []):
                found.append((inner["title"], target["expr"]))
    return found


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (words of PromQL, labels and ranges left out)."""
    text = re.sub(r'"[^"]*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = _GROUPING.sub(" ", text)
    text = re.sub(r"\b\d+(\.\d+)?\b", " ", text)
    return {word for word in _IDENTIFIER.findall(text) if word not in PROMQL_WORDS}


def selector_labels(expr: str) -> list[tuple[str, str]]:
    """(metric, label name) of every matcher in a `metric{...}` selector."""
    return [
        (metric, label)
        for metric, body in _SELECTOR.findall(expr)
        for label in _MATCHER.findall(body)
    ]


def test_the_parser_finds_metric_names_and_leaves_promql_alone() -> None:
    expr = (
        "histogram_quantile(0.95, sum by (le, provider) (rate(skillet_model_call_seconds_bucket"
        '{result="ok", provider=~"a|b"}[$__rate_interval]))) / max(skillet_queue_jobs) > 0'
    )
    assert metric_names(expr) == {"skillet_model_call_seconds_bucket", "skillet_queue_jobs"}
    assert selector_labels(expr) == [
        ("skillet_model_call_seconds_bucket", "result"),
        ("skillet_model_call_seconds_bucket", "provider"),
    ]
    assert metric_names("sum(rate(skillet_turns_startd_total[5m]))") == {
        "skillet_turns_startd_total"
    }


def test_every_metric_the_dashboard_queries_is_served(
    dashboard: dict[str, Any], served: dict[str, frozenset[str]]
) -> None:
    queries = _queries(dashboard)
    assert len(queries) >= 20
    for title, expr in queries:
        names = metric_names(expr)
        assert names, f"{title}: no metric in {expr}"
        unknown = names - served.keys()
        assert not unknown, f"{title}: {sorted(unknown)} is served by no skillet process"
        for metric, label in selector_labels(expr):
            assert label in served[metric], f"{title}: {metric} has no label {label}"


@pytest.mark.parametrize(
    ("subject", "metric"),
    [
        ("turns", "skillet_turns_started_total"),
        ("turn outcomes", "skillet_turns_completed_total"),
        ("turn latency", "skillet_turn_run_seconds_bucket"),
        ("queue wait", "skillet_turn_queue_wait_seconds_bucket"),
        ("failures", "skillet_turns_failed_total"),
        ("queue depth", "skillet_queue_jobs"),
        ("outbox", "skillet_outbox_deliveries_total"),
        ("curator", "skillet_curator_ticks_total"),
        ("curator transitions", "skillet_curator_transitions_total"),
        ("webhook", "skillet_webhook_requests_total"),
        ("api", "skillet_api_requests_total"),
    ],
)
def test_the_dashboard_covers(dashboard: dict[str, Any], subject: str, metric: str) -> None:
    assert any(metric in metric_names(expr) for _, expr in _queries(dashboard)), subject


def test_panels_use_the_provisioned_datasource(dashboard: dict[str, Any]) -> None:
    [source] = yaml.safe_load(DATASOURCES.read_text())["datasources"]
    assert source["type"] == "prometheus"
    assert source["url"] == "http://prometheus:9090"  # the compose service
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": source["uid"]}, panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == source["uid"], panel["title"]


def test_panel_ids_are_unique(dashboard: dict[str, Any]) -> None:
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert dashboard["uid"]


def test_grafana_loads_the_dashboard_folder() -> None:
    [provider] = yaml.safe_load(DASHBOARD_PROVIDERS.read_text())["providers"]
    assert provider["type"] == "file"
    # docker-compose.yml mounts deploy/grafana/dashboards there (test_compose checks the mount).
    assert provider["options"]["path"] == "/etc/grafana/dashboards"


def test_prometheus_scrapes_every_skillet_process() -> None:
    config = yaml.safe_load(PROMETHEUS.read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    # The ports each compose service serves /metrics on (docker-compose.yml).
    for job, port in (("worker", 9100), ("webhook", 8080), ("api", 8081)):
        assert job in jobs, f"no scrape job for {job}"
        [discovery] = jobs[job]["dns_sd_configs"]
        # Type A on the service name: one target per replica, so scaled services are scraped.
        assert discovery["type"] == "A"
        assert discovery["names"] == [job]
        assert discovery["port"] == port
        assert jobs[job].get("metrics_path", METRICS_PATH) == METRICS_PATH
