"""Prometheus metrics of an aiohttp application: requests by route and outcome, and latency.

Labels come from closed sets: `route` is the canonical path of the route that matched
(`/v1/orgs/{org}/skills`, never the ids in it) or `other` (no route matched: scanners,
typos); `outcome` is the status class (`2xx`, `3xx`, `4xx`, `5xx`). Every (route, outcome)
series exists from the start at 0, so `increase(...)` over it reads 0, not "no data", and the
first failure of a route is seen. Each application owns its registry (nothing global).

    GET /metrics   Prometheus text (added by `serve_metrics`)
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from aiohttp import web
from aiohttp.typedefs import Handler
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest

METRICS_PATH = "/metrics"
OTHER_ROUTE = "other"
OUTCOMES = ("2xx", "3xx", "4xx", "5xx")
# Seconds: webhook and API handlers are a few queries and a Redis call.
REQUEST_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


def outcome(status: int) -> str:
    return f"{status // 100}xx" if 200 <= status < 600 else "5xx"


def route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else OTHER_ROUTE


class HttpMetrics:
    """`{prefix}_requests_total{route, outcome}` and `{prefix}_request_seconds{route}`."""

    def __init__(
        self, prefix: str, routes: Iterable[str], registry: CollectorRegistry | None = None
    ) -> None:
        self.registry = registry or CollectorRegistry()
        self.requests = Counter(
            f"{prefix}_requests",
            "HTTP requests by route (its path template; other = no route matched) and "
            "outcome (status class)",
            ["route", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            f"{prefix}_request_seconds",
            "HTTP request handling time by route",
            ["route"],
            buckets=REQUEST_BUCKETS_S,
            registry=self.registry,
        )
        for route in {*routes, METRICS_PATH, OTHER_ROUTE}:
            for result in OUTCOMES:
                self.requests.labels(route=route, outcome=result)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.monotonic()
        status = 500  # an exception that is not an HTTP answer ends as a 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            route = route_of(request)
            self.requests.labels(route=route, outcome=outcome(status)).inc()
            self.latency.labels(route=route).observe(time.monotonic() - started)

    async def serve(self, request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def route_paths(app: web.Application) -> list[str]:
    """The canonical path of every route of `app` (its label values)."""
    return [resource.canonical for resource in app.router.resources()]
