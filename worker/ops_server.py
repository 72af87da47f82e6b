"""A worker's operator surface: its heartbeat, and /metrics, /healthz, /livez over HTTP.

Served by each worker on `SKILLET_METRICS_PORT` (0 = no HTTP server; the heartbeat still
runs). The HTTP server runs on the worker's own event loop, so a worker whose loop is stuck
stops answering, which is what a liveness probe should see.

    GET /metrics  Prometheus text format (this worker's registry; queue depth read at scrape)
    GET /healthz  readiness: 200 when Redis, Postgres and S3 answer and the worker is not
                  draining, else 503; JSON {"status", "checks": {name: {ok, latency_ms, error}}}
    GET /livez    200 while the worker's event loop answers
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from typing import TYPE_CHECKING

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from similarity.choice import backend_name
from webhook.server import start_site
from worker.health import HealthReport, postgres_check, redis_check, run_checks, s3_check
from worker.heartbeat import Heartbeat, WorkerBeat, new_worker_id
from worker.metrics import WorkerMetrics
from worker.queue_status import queue_depth
from worker.settings import Settings
from worker.worker_state import WorkerState

if TYPE_CHECKING:
    from worker.resources import Resources

log = structlog.get_logger(__name__)

SHUTDOWN_TIMEOUT_S = 2.0  # a scrape in flight at shutdown gets this long


class Operations:
    """Owns the heartbeat task and the HTTP server; `close()` stops both, never raises."""

    def __init__(
        self,
        settings: Settings,
        resources: Resources,
        metrics: WorkerMetrics,
        state: WorkerState,
        *,
        worker_id: str | None = None,
    ) -> None:
        self._settings = settings
        self._resources = resources
        self._metrics = metrics
        self._state = state
        self.worker_id = worker_id or new_worker_id()
        self._started_at = time.time()
        self._last_up: bool | None = None  # all dependencies answered at the last check
        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        self.similarity = backend_name(settings.similarity_config())
        self._heartbeat = Heartbeat(
            resources.redis,
            settings.queue_name,
            self.worker_id,
            self._beat,
            interval_s=settings.heartbeat_interval_s,
        )

    async def health(self) -> HealthReport:
        r = self._resources
        checks = {
            "postgres": postgres_check(r.pool),
            "redis": redis_check(r.redis),
            "s3": s3_check(r.s3, self._settings.s3_bucket),
        }
        report = await run_checks(
            checks, self._settings.health_timeout_s, draining=self._state.draining()
        )
        for name, result in report.checks.items():
            self._metrics.dependency(name, result.ok)
        # Draining is not a failure (the worker logged worker.draining when it began): only
        # what the dependencies say changes the healthy/unhealthy events.
        up = all(c.ok for c in report.checks.values())
        if up != self._last_up:
            event = "worker.healthy" if up else "worker.unhealthy"
            log.info(event, **{n: c.error or "ok" for n, c in report.checks.items()})
        self._last_up = up
        return report

    async def _beat(self) -> WorkerBeat:
        report = await self.health()
        return WorkerBeat(
            worker_id=self.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=self._started_at,
            seen_at=time.time(),
            jobs_in_progress=self._state.jobs_in_progress(),
            job_ids=self._state.running_job_ids(),
            in_progress_ttl_s=self._state.in_progress_ttl_s(),
            draining=self._state.draining(),
            healthy=report.healthy,
            metrics_port=self.port,
            similarity=self.similarity,
        )

    async def start(self) -> None:
        if self._settings.metrics_port:
            self._runner, self.port = await start_site(
                self._app(),
                self._settings.metrics_host,
                self._settings.metrics_port,
                shutdown_timeout_s=SHUTDOWN_TIMEOUT_S,
            )
            log.info("worker.metrics_serving", port=self.port, worker_id=self.worker_id)
        self._heartbeat.start()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self._heartbeat.close()
        if self._runner is not None:
            try:
                await self._runner.cleanup()
            except Exception as exc:
                log.warning("worker.metrics_close_failed", error=repr(exc)[:200])
            self._runner = None

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics_handler)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/livez", self._livez)
        return app

    async def _metrics_handler(self, _: web.Request) -> web.Response:
        try:
            async with asyncio.timeout(self._settings.health_timeout_s):
                depth = await queue_depth(self._resources.redis, self._settings.queue_name)
            self._metrics.queue_depth(due=depth.due, deferred=depth.deferred)
        except Exception as exc:  # Redis down: serve the rest; the gauge keeps its last value
            log.warning("worker.queue_depth_failed", error=repr(exc)[:200])
        body = generate_latest(self._metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _: web.Request) -> web.Response:
        report = await self.health()
        body = {**report.to_json(), "worker_id": self.worker_id}
        return web.json_response(body, status=200 if report.healthy else 503)

    async def _livez(self, _: web.Request) -> web.Response:
        return web.json_response({"status": "alive", "worker_id": self.worker_id})
