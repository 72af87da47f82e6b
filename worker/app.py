"""arq worker wiring: functions, JSON serializers, timeouts, startup/shutdown hooks."""

from __future__ import annotations

from typing import Any

import structlog
from arq import func
from arq.worker import Worker

from delivery.contract import Sender
from jobs import serialization
from jobs.context import arq_job
from jobs.inbound import handle_inbound_message, undecodable_job
from jobs.message_echo import handle_message_echo
from jobs.payloads import HANDLE_INBOUND_MESSAGE, HANDLE_MESSAGE_ECHO
from jobs.queue import redis_settings
from jobs.serialization import UNDECODABLE_JOB
from similarity.choice import backend_name
from turn.model import Model
from worker.crons import (
    abandoned_after_s,
    curator_config,
    events_config,
    periodic_jobs,
    sweep_after_s,
    template_sync_config,
)
from worker.metered import metered_turn
from worker.metrics import WorkerMetrics
from worker.ops_server import Operations
from worker.resilient_worker import ResilientWorker
from worker.resources import Resources, open_resources_with_retry
from worker.settings import Settings
from worker.worker_state import ArqWorkerState, IdleWorkerState

log = structlog.get_logger(__name__)


async def startup(ctx: dict[str, Any]) -> None:
    """Open pools; a worker that cannot reach its services exits so its supervisor restarts it."""
    settings: Settings = ctx["settings"]
    metrics: WorkerMetrics = ctx["metrics"]
    resources = await open_resources_with_retry(
        settings,
        model=ctx.get("model_override"),
        sender=ctx.get("sender_override"),
        metrics=metrics,
    )
    ctx["resources"] = resources
    metrics.watch_activations(lambda: resources.recorder.stats)
    operations = Operations(
        settings, resources, metrics, ctx.get("worker_state", IdleWorkerState())
    )
    try:
        await operations.start()  # a taken metrics port fails the start, loudly
    except BaseException:
        await resources.close()
        raise
    ctx["operations"] = operations
    ctx["turn_deps"] = resources.turn_deps
    ctx["pool"] = resources.pool
    ctx["max_tries"] = settings.max_tries
    ctx["retry_defer_s"] = settings.retry_defer_s
    ctx["turn_deadline_s"] = turn_deadline_s(settings.job_timeout_s)
    ctx["clock"] = resources.turn_deps.clock
    ctx["curator"] = curator_config(settings)
    ctx["outbox_abandoned_after_s"] = abandoned_after_s(settings)
    ctx["customer_service_window_s"] = settings.customer_service_window_s
    ctx["sweep_after_s"] = sweep_after_s(settings)
    ctx["handoff_idle_s"] = settings.human_idle_s
    ctx["handoff_wait_s"] = settings.handoff_wait_s
    ctx["events"] = events_config(settings)
    ctx["echo_grace_s"] = settings.echo_grace_s
    ctx["templates"] = template_sync_config(settings)
    ctx["media_objects"] = resources.store
    ctx["media_retention_days"] = settings.media_retention_days
    ctx["events_retention_days"] = settings.events_retention_days
    log.info(
        "worker.started",
        queue=settings.queue_name,
        max_jobs=settings.max_jobs,
        similarity=backend_name(settings.similarity_config()),
    )


async def shutdown(ctx: dict[str, Any]) -> None:
    """Flush activations and close pools; never raises (a raising hook kills arq's loop)."""
    resources: Resources | None = ctx.get("resources")
    if resources is None:
        return
    try:
        operations: Operations | None = ctx.get("operations")
        if operations is not None:
            await operations.close()  # first: the heartbeat and /healthz use the pools
        await resources.close()
        log.info("worker.stopped", activations=vars(resources.recorder.stats))
    except Exception as exc:
        log.error("worker.shutdown_failed", error=repr(exc)[:300])


# Kept between a turn's own deadline and arq's job timeout: enough to record the failure
# (a retry or a dead letter) before arq cancels the job with no trace of its own.
DEADLINE_MARGIN_S = 10.0


# Settling an echo is one statement; its tries cover a job run before the grace (retried
# when it passes) and a database that is briefly away.
ECHO_TIMEOUT_S = 30
ECHO_MAX_TRIES = 20


def turn_deadline_s(job_timeout_s: float) -> float:
    return max(job_timeout_s - DEADLINE_MARGIN_S, job_timeout_s * 0.8)


def build_worker(
    settings: Settings,
    *,
    burst: bool = False,
    handle_signals: bool = True,
    model: Model | None = None,
    sender: Sender | None = None,
) -> Worker:
    """A configured arq Worker; `model`/`sender` replace the defaults (tests, benchmarks)."""
    function = func(
        metered_turn(handle_inbound_message),  # type: ignore[arg-type]
        name=HANDLE_INBOUND_MESSAGE,
        timeout=settings.job_timeout_s,
        max_tries=settings.max_tries,
    )
    undecodable = func(arq_job(undecodable_job), name=UNDECODABLE_JOB, max_tries=1)
    echo = func(
        arq_job(handle_message_echo),
        name=HANDLE_MESSAGE_ECHO,
        timeout=ECHO_TIMEOUT_S,
        max_tries=ECHO_MAX_TRIES,
    )
    cron_jobs, side_functions = periodic_jobs(settings, burst=burst)
    functions = [function, undecodable, echo, *side_functions]
    metrics = WorkerMetrics()  # its own registry: several workers may share a process
    worker = ResilientWorker(
        functions=functions,
        cron_jobs=cron_jobs or None,
        queue_name=settings.queue_name,
        redis_settings=redis_settings(settings.redis_url),
        burst=burst,
        handle_signals=handle_signals,
        on_startup=startup,
        on_shutdown=shutdown,
        ctx={
            "settings": settings,
            "model_override": model,
            "sender_override": sender,
            "metrics": metrics,
        },
        max_jobs=settings.max_jobs,
        poll_delay=settings.poll_delay_s,
        job_timeout=settings.job_timeout_s,
        max_tries=settings.max_tries,
        keep_result=settings.keep_result_s,
        job_completion_wait=settings.job_completion_wait_s,
        health_check_interval=settings.health_check_interval_s,
        job_serializer=serialization.dumps,
        job_deserializer=serialization.loads,
    )
    state = ArqWorkerState(worker)
    worker.ctx["worker_state"] = state
    metrics.watch_worker(state)
    return worker
