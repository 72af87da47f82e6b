"""Metering wrappers the composition root puts around the model, the sender and the turn job.

They only observe: every call, result and exception passes through unchanged, so the turn
code and the job keep no knowledge of Prometheus.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any

from arq import Retry

from core.errors import SkilletError
from delivery.contract import Recipient, Sender
from delivery.errors import SendError, SendParked
from delivery.outbox_queries import OutboxRow
from turn.activation_queries import ActivationRow
from turn.activations import BatchWriter
from turn.model import Model, ModelRequest, ModelResponse
from worker.metrics import WorkerMetrics

Job = Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any]]]


class MeteredModel:
    """A Model that records each call's latency, result, provider and tokens (cache included)."""

    def __init__(self, inner: Model, metrics: WorkerMetrics) -> None:
        self.inner = inner
        self._metrics = metrics

    async def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        try:
            response = await self.inner.complete(request)
        except BaseException:
            self._metrics.model_called(time.monotonic() - started, None)
            raise
        self._metrics.model_called(time.monotonic() - started, response)
        return response


class MeteredSender:
    """A Sender that counts deliveries: sent, failed (permanent, by code), retry, parked (the
    number waits for a new token), error."""

    def __init__(self, inner: Sender, metrics: WorkerMetrics) -> None:
        self.inner = inner
        self._metrics = metrics

    async def send(self, row: OutboxRow, recipient: Recipient) -> Sequence[str] | None:
        try:
            provider_ids = await self.inner.send(row, recipient)
        except SendError as exc:
            status = "parked" if isinstance(exc, SendParked) else None
            self._metrics.delivery(status or ("retry" if exc.retryable else "failed"), exc.code)
            raise
        except Exception:
            self._metrics.delivery("error", "unexpected")
            raise
        self._metrics.delivery("sent")
        return provider_ids


def metered_model(model: Model, metrics: WorkerMetrics | None) -> Model:
    return model if metrics is None else MeteredModel(model, metrics)


def metered_sender(sender: Sender, metrics: WorkerMetrics | None) -> Sender:
    return sender if metrics is None else MeteredSender(sender, metrics)


def metered_batches(write: BatchWriter, metrics: WorkerMetrics | None) -> BatchWriter:
    """The activation batch writer, timed (success or failure alike)."""
    if metrics is None:
        return write

    async def timed(rows: Sequence[ActivationRow]) -> None:
        with metrics.activation_batch.time():
            await write(rows)

    return timed


def queue_wait_s(ctx: dict[str, Any], started_at: float) -> float | None:
    """Seconds from when arq could first run this try (its score: the enqueue time plus the
    coalescing deferral, or the retry time) to `started_at` (epoch seconds)."""
    score_ms = ctx.get("score")
    if isinstance(score_ms, int | float) and score_ms > 0:
        return started_at - score_ms / 1000
    enqueued = ctx.get("enqueue_time")
    if isinstance(enqueued, datetime):
        return started_at - enqueued.timestamp()
    return None


def _outcome(result: Any) -> tuple[str, str | None]:
    if isinstance(result, dict):
        return str(result.get("status", "error")), result.get("code")
    return "error", "unexpected"


def metered_turn(job: Job) -> Job:
    """The turn job, observed: started, queue wait, run time, outcome (from its result)."""

    @functools.wraps(job)
    async def run(ctx: Any, payload: dict[str, Any]) -> dict[str, Any]:
        metrics: WorkerMetrics | None = ctx.get("metrics")
        if metrics is None:
            return await job(ctx, payload)
        metrics.turn_started(queue_wait_s(ctx, time.time()))
        started = time.monotonic()
        outcome: str = "error"
        code: str | None = "unexpected"
        try:
            result = await job(ctx, payload)
            outcome, code = _outcome(result)
            return result
        except Retry:
            outcome, code = "retry", None
            raise
        except asyncio.CancelledError:
            outcome, code = "cancelled", None
            raise
        except SkilletError as exc:
            code = exc.code
            raise
        finally:
            metrics.turn_finished(outcome, code, time.monotonic() - started)

    return run
