"""Worker metrics, metering wrappers, health reports and heartbeats, without services."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from arq import Retry
from prometheus_client import generate_latest

from core.errors import SkilletError
from delivery.contract import Recipient
from delivery.errors import SendError
from delivery.outbox_queries import OutboxRow
from skills.curator import CuratorReport, Transition
from skills.curator.tick import TickResult
from tests.prometheus_samples import parse_samples, value
from turn.activations import ActivationStats
from turn.model import ModelRequest, ModelResponse
from worker.app import build_worker
from worker.health import CheckResult, HealthReport, run_checks
from worker.heartbeat import WorkerBeat
from worker.metered import MeteredModel, MeteredSender, metered_turn, queue_wait_s
from worker.metrics import WorkerMetrics, code_label
from worker.settings import Settings


def _samples(metrics: WorkerMetrics) -> Any:
    return parse_samples(generate_latest(metrics.registry).decode())


def test_label_values_come_from_closed_sets() -> None:
    assert code_label("storage_unavailable") == "storage_unavailable"
    assert code_label(None) == "none"
    for unbounded in ("5511999990000", "Olá, tudo bem?", str(uuid.uuid4()), "x" * 80):
        assert code_label(unbounded) == "other"
    metrics = WorkerMetrics()
    metrics.tool_called("read_skill_reference", None)
    metrics.tool_called("whatever the model invents", "unknown_tool")
    metrics.turn_finished("some new status", "Weird Code!", 0.1)
    s = _samples(metrics)
    assert value(s, "skillet_tool_calls_total", tool="read_skill_reference", result="ok") == 1
    assert value(s, "skillet_tool_calls_total", tool="other", result="unknown_tool") == 1
    assert value(s, "skillet_turns_failed_total", outcome="error", code="other") == 1


def test_labelled_counters_have_a_zero_series_for_each_known_value_from_the_start() -> None:
    s = _samples(WorkerMetrics())

    def zero(name: str, **labels: str) -> bool:
        return s.get((name, frozenset(labels.items()))) == 0

    assert zero("skillet_turns_completed_total", outcome="replied")
    assert zero("skillet_turns_failed_total", outcome="failed", code="none")
    assert zero("skillet_turns_failed_total", outcome="failed", code="model_unauthorized")
    assert zero("skillet_turns_failed_total", outcome="retry", code="model_unavailable")
    assert zero("skillet_model_tokens_total", provider="openai", direction="cache_read")
    assert zero("skillet_model_usage_unreported_total", provider="openai", direction="input")
    assert zero("skillet_replies_trimmed_total", provider="anthropic")
    assert zero("skillet_tool_calls_total", tool="read_skill_reference", result="ok")
    assert zero(
        "skillet_tool_calls_total", tool="read_skill_reference", result="storage_unavailable"
    )
    assert zero("skillet_outbox_deliveries_total", result="failed", code="none")
    assert zero("skillet_curator_ticks_total", status="failed")
    assert zero("skillet_curator_runs_total", trigger="idle")
    assert zero("skillet_curator_transitions_total", from_state="stale", to_state="archived")
    assert zero("skillet_activation_rows_total", result="dropped")


async def test_each_worker_has_its_own_registry() -> None:
    settings = Settings(queue_name=f"q:{uuid.uuid4().hex}")
    first, second = build_worker(settings), build_worker(settings)
    first.ctx["metrics"].turns_started.inc()
    assert first.ctx["metrics"].registry is not second.ctx["metrics"].registry
    assert value(_samples(first.ctx["metrics"]), "skillet_turns_started_total") == 1
    assert value(_samples(second.ctx["metrics"]), "skillet_turns_started_total") == 0


def test_matches_count_probes_and_what_only_an_intent_model_matched() -> None:
    metrics = WorkerMetrics()
    metrics.skills_matched(2, 1, 1)
    metrics.skills_matched(1, 0, 0)
    s = _samples(metrics)
    assert value(s, "skillet_turn_skills_matched_count") == 2
    assert value(s, "skillet_turn_skills_matched_sum") == 3
    assert value(s, "skillet_skill_probes_total") == 1
    assert value(s, "skillet_skill_intent_matches_total") == 1


def test_activation_rows_are_read_from_the_recorder_stats() -> None:
    metrics = WorkerMetrics()
    assert value(_samples(metrics), "skillet_activation_rows_total", result="written") == 0
    stats = ActivationStats(written=5, failed=2, dropped=1, batches=3)
    metrics.watch_activations(lambda: stats)
    s = _samples(metrics)
    assert value(s, "skillet_activation_rows_total", result="written") == 5
    assert value(s, "skillet_activation_rows_total", result="failed") == 2
    assert value(s, "skillet_activation_rows_total", result="dropped") == 1
    assert value(s, "skillet_activation_batches_total") == 3


def test_curator_ticks_count_runs_by_trigger_and_transitions_by_kind() -> None:
    metrics = WorkerMetrics()
    report = CuratorReport(
        organization_id=uuid.uuid4(),
        transitioned=(Transition("a", "active", "stale"), Transition("b", "stale", "archived")),
        skipped=(),
    )
    metrics.curator_ticked(TickResult(status="ran", due={"idle": 1}, reports=(report,)))
    metrics.curator_ticked(TickResult(status="busy"))
    metrics.curator_failed()
    s = _samples(metrics)
    assert value(s, "skillet_curator_ticks_total", status="ran") == 1
    assert value(s, "skillet_curator_ticks_total", status="busy") == 1
    assert value(s, "skillet_curator_ticks_total", status="failed") == 1
    assert value(s, "skillet_curator_runs_total", trigger="idle") == 1
    kind = {"from_state": "stale", "to_state": "archived"}
    assert value(s, "skillet_curator_transitions_total", **kind) == 1


async def _run_job(job: Any, ctx: dict[str, Any]) -> Any:
    try:
        return await metered_turn(job)(ctx, {})
    except (Retry, SkilletError, asyncio.CancelledError) as exc:
        return exc


async def test_the_turn_job_is_observed_by_outcome() -> None:
    metrics = WorkerMetrics()
    ctx = {"metrics": metrics, "score": 1}

    async def replied(ctx: Any, payload: Any) -> dict[str, Any]:
        return {"status": "replied"}

    async def dead_lettered(ctx: Any, payload: Any) -> dict[str, Any]:
        return {"status": "failed", "code": "unknown_organization"}

    async def retried(ctx: Any, payload: Any) -> dict[str, Any]:
        raise Retry(defer=1)

    async def broken(ctx: Any, payload: Any) -> dict[str, Any]:
        raise SkilletError("boom", code="model_unavailable")

    async def cancelled(ctx: Any, payload: Any) -> dict[str, Any]:
        raise asyncio.CancelledError

    for job in (replied, dead_lettered, retried, broken, cancelled):
        await _run_job(job, ctx)
    s = _samples(metrics)
    assert value(s, "skillet_turns_started_total") == 5
    assert value(s, "skillet_turns_completed_total", outcome="replied") == 1
    failed = "skillet_turns_failed_total"
    assert value(s, failed, outcome="failed", code="unknown_organization") == 1
    assert value(s, failed, outcome="retry", code="none") == 1
    assert value(s, failed, outcome="error", code="model_unavailable") == 1
    assert value(s, failed, outcome="cancelled", code="none") == 1
    assert value(s, "skillet_turn_queue_wait_seconds_count") == 5
    # Without metrics in ctx (a bare call), the job runs unobserved.
    assert await metered_turn(replied)({}, {}) == {"status": "replied"}


def test_queue_wait_starts_when_the_job_became_due() -> None:
    # score (ms) = enqueue time + coalescing deferral: the deliberate wait is not counted.
    enqueued = datetime.fromtimestamp(5, UTC)
    assert queue_wait_s({"score": 10_000, "enqueue_time": enqueued}, 12.5) == 2.5
    assert queue_wait_s({"enqueue_time": enqueued}, 12.5) == 7.5
    assert queue_wait_s({}, 12.5) is None


class _Sender:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    async def send(self, row: OutboxRow, recipient: Recipient) -> None:
        if self.error is not None:
            raise self.error


async def test_deliveries_are_counted_by_result_and_code() -> None:
    metrics = WorkerMetrics()
    row = OutboxRow(uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), "oi", "pending")
    recipient = Recipient("whatsapp", "5511999990000")
    failures: list[Exception | None] = [
        None,
        SendError("refused", code="send_rejected", retryable=False),
        SendError("429"),
        RuntimeError("bug"),
    ]
    for error in failures:
        try:
            await MeteredSender(_Sender(error), metrics).send(row, recipient)
        except Exception as exc:
            assert exc is error
    s = _samples(metrics)
    deliveries = "skillet_outbox_deliveries_total"
    assert value(s, deliveries, result="sent", code="none") == 1
    assert value(s, deliveries, result="failed", code="send_rejected") == 1
    assert value(s, deliveries, result="retry", code="send_failed") == 1
    assert value(s, deliveries, result="error", code="unexpected") == 1
    assert "5511999990000" not in generate_latest(metrics.registry).decode()


class _Model:
    def __init__(self, fail: bool) -> None:
        self.fail = fail

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self.fail:
            raise TimeoutError
        return ModelResponse(
            text="ok",
            input_tokens=10,
            output_tokens=3,
            cache_write_tokens=8,
            provider="anthropic",
            model="claude-x",
        )


async def test_model_calls_are_timed_and_tokens_counted() -> None:
    metrics = WorkerMetrics()
    request = ModelRequest(prefix="p", skill_context="", messages=(), tools=())
    await MeteredModel(_Model(fail=False), metrics).complete(request)
    with pytest.raises(TimeoutError):
        await MeteredModel(_Model(fail=True), metrics).complete(request)
    s = _samples(metrics)
    calls, tokens = "skillet_model_call_seconds_count", "skillet_model_tokens_total"
    assert value(s, calls, provider="anthropic", result="ok") == 1
    assert value(s, calls, provider="unknown", result="error") == 1
    assert value(s, tokens, provider="anthropic", direction="input") == 10
    assert value(s, tokens, provider="anthropic", direction="output") == 3
    assert value(s, tokens, provider="anthropic", direction="cache_write") == 8
    assert value(s, tokens, provider="anthropic", direction="cache_read") == 0


def test_unreported_tokens_are_counted_apart_and_trimmed_replies_counted() -> None:
    metrics = WorkerMetrics()
    metrics.model_called(
        0.1,
        ModelResponse(
            text="Olá, o pra",
            input_tokens=None,
            output_tokens=None,
            cache_read_tokens=None,
            cache_write_tokens=0,
            provider="openai",
            truncated=True,
        ),
    )
    metrics.model_called(0.1, ModelResponse(text=None, provider="openai", truncated=True))
    s = _samples(metrics)
    unreported, tokens = "skillet_model_usage_unreported_total", "skillet_model_tokens_total"
    for direction in ("input", "output", "cache_read"):
        assert value(s, unreported, provider="openai", direction=direction) == 1
        assert value(s, tokens, provider="openai", direction=direction) == 0
    assert value(s, unreported, provider="openai", direction="cache_write") == 0
    # Only the text answer is a trimmed reply (an empty one gets the fallback instead).
    assert value(s, "skillet_replies_trimmed_total", provider="openai") == 1


async def test_health_checks_run_concurrently_and_time_out() -> None:
    async def ok() -> None:
        return None

    async def refused() -> None:
        raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)")

    async def hangs() -> None:
        await asyncio.sleep(60)

    report = await run_checks({"redis": ok, "postgres": refused, "s3": hangs}, timeout_s=0.2)
    assert not report.healthy and report.status == "unhealthy"
    body = report.to_json()
    assert body["checks"]["redis"]["ok"] is True
    assert body["checks"]["postgres"]["error"].startswith("ConnectionRefusedError")
    assert "0.2 s" in body["checks"]["s3"]["error"]
    assert report.checks["s3"].latency_ms < 5000


def test_a_draining_worker_is_not_ready() -> None:
    report = HealthReport({"redis": CheckResult(True, 1.0)}, draining=True)
    assert (report.healthy, report.status) == (False, "draining")
    assert HealthReport({"redis": CheckResult(True, 1.0)}).status == "ok"


def test_a_heartbeat_round_trips_through_json() -> None:
    beat = WorkerBeat("h-1-abc", "h", 1, 10.0, 11.0, 2, False, True, 9100)
    assert WorkerBeat.from_json(json.dumps(beat.to_json())) == beat


def test_operations_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings()
    assert (defaults.metrics_port, defaults.heartbeat_interval_s) == (0, 10.0)
    monkeypatch.setenv("SKILLET_METRICS_PORT", "9100")
    assert Settings().metrics_port == 9100
    with pytest.raises(ValueError):
        Settings(metrics_port=70_000)
