"""A worker's Prometheus metrics: one CollectorRegistry per worker, bounded labels only.

Every label value comes from a closed set written in our code (outcomes, error codes, tool
names, curator states); anything else becomes "other". Message text, phone numbers, org and
conversation ids never reach a label. Each worker owns its registry (several workers can
share a process in tests; nothing goes to prometheus_client's global registry).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from core.errors import DatabaseRejected, DatabaseUnavailable, StorageError
from delivery.errors import SendError
from turn.errors import (
    ModelError,
    ModelNotConfigured,
    ModelRequestRejected,
    ModelResponseInvalid,
    UnknownOrganization,
)
from turn.reply_trim import trims_reply
from turn.tools.registry import turn_tools

if TYPE_CHECKING:
    from skills.curator.tick import TickResult
    from turn.activations import ActivationStats
    from turn.model import ModelResponse
    from worker.worker_state import WorkerState

# Turn outcomes (jobs.inbound's result "status"): answered or recognised, vs. not done.
COMPLETED_OUTCOMES = frozenset({"replied", "duplicate", "redelivered", "queued"})
FAILED_OUTCOMES = frozenset({"failed", "rejected", "retry", "cancelled", "error"})
_CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_PROVIDER = re.compile(r"^[a-z][a-z0-9_.-]{0,31}$")  # e.g. local, anthropic, openai
_STATES = frozenset({"active", "stale", "archived"})
_TRIGGERS = frozenset({"manual", "idle", "ceiling"})

# Label values given a series at 0 from the start, so `increase(...)` reads 0 instead of no
# data, and the first failure of a kind is an increase (a series born at 1 is not one).
PROVIDERS = ("local", "anthropic", "openai")  # worker.model_providers builds these
TOKEN_DIRECTIONS = ("input", "output", "cache_read", "cache_write")
# The codes a turn job ends with: our errors' codes, and the job layer's own (jobs.inbound).
TURN_FAILURE_CODES = (
    "none",
    ModelError.code,
    ModelNotConfigured.code,
    ModelRequestRejected.code,
    ModelResponseInvalid.code,
    "model_unauthorized",
    UnknownOrganization.code,
    SendError.code,
    StorageError.code,
    DatabaseUnavailable.code,
    DatabaseRejected.code,
    "transient_error",
    "unexpected_error",
    "turn_deadline",
    "invalid_payload",
)
DELIVERY_RESULTS = ("sent", "failed", "retry", "error")
# Events webhook: a settled attempt's outcome (events.backoff.Outcome) as its label.
EVENT_RESULTS = {"delivered": "delivered", "retry": "retried", "failed": "failed"}
CURATOR_TICK_STATUSES = ("ran", "busy", "failed")
CURATOR_TRANSITIONS = (("active", "stale"), ("stale", "archived"), ("active", "archived"))

# Seconds. Queue wait: coalescing is subtracted (see turn_started), so healthy is well < 1 s.
QUEUE_WAIT_BUCKETS_S = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
RUN_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)
MODEL_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60)
BATCH_BUCKETS_S = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)
SKILL_COUNT_BUCKETS = (0, 1, 2, 3, 5, 8)


# Every way a conversation reaches a person (conversations.mode_cause).
HANDOFF_CAUSES = ("tool", "customer", "phone", "console")
FOLLOWUP_RESULTS = (
    "sent",
    "customer_wrote",
    "opted_out",
    "person_holds",
    "template_unavailable",
)


def code_label(value: object) -> str:
    """An error code as a label: our codes are snake_case constants; anything else is 'other'."""
    if value is None or value == "":
        return "none"
    text = str(value)
    return text if _CODE.match(text) else "other"


class _ActivationStatsCollector(Collector):
    """Reads the activation recorder's own counters at scrape time (no edits to the recorder)."""

    def __init__(self) -> None:
        self.source: Callable[[], ActivationStats] | None = None

    def collect(self) -> Iterator[Metric]:
        rows = CounterMetricFamily(
            "skillet_activation_rows",
            "Activation/usage rows by result: written, failed (batch write failed), dropped "
            "(queue full, closed, or flush timeout at shutdown)",
            labels=["result"],
        )
        batches = CounterMetricFamily(
            "skillet_activation_batches", "Activation batches written successfully"
        )
        stats = self.source() if self.source is not None else None
        for result in ("written", "failed", "dropped"):
            rows.add_metric([result], getattr(stats, result, 0))
        batches.add_metric([], getattr(stats, "batches", 0))
        yield rows
        yield batches


class WorkerMetrics:
    """Every metric of one worker; implements conversation.metrics.TurnMetrics."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self._tools = frozenset(t.name for t in turn_tools())
        self.turns_started = Counter(
            "skillet_turns_started", "Inbound-message jobs started (each try)", registry=r
        )
        self.turns_completed = Counter(
            "skillet_turns_completed",
            "Jobs that finished: replied, duplicate, redelivered (a pending reply sent), or "
            "queued (left to the conversation's lease holder)",
            ["outcome"],
            registry=r,
        )
        self.turns_failed = Counter(
            "skillet_turns_failed",
            "Jobs that did not finish: retry (will run again), failed (dead-lettered), "
            "rejected (bad payload, dead-lettered), cancelled (timeout or shutdown), error",
            ["outcome", "code"],
            registry=r,
        )
        self.queue_wait = Histogram(
            "skillet_turn_queue_wait_seconds",
            "From when a job became due (enqueue time + coalescing deferral, or its retry "
            "time) to when a worker started it",
            buckets=QUEUE_WAIT_BUCKETS_S,
            registry=r,
        )
        self.run_time = Histogram(
            "skillet_turn_run_seconds",
            "Job run time, start to finish",
            ["outcome"],
            buckets=RUN_BUCKETS_S,
            registry=r,
        )
        self.in_progress = Gauge(
            "skillet_jobs_in_progress", "Jobs running in this worker now", registry=r
        )
        self.draining = Gauge(
            "skillet_worker_draining", "1 once the worker stopped taking jobs", registry=r
        )
        self.model_latency = Histogram(
            "skillet_model_call_seconds",
            "Model provider call latency (provider: who answered; unknown when the call failed)",
            ["provider", "result"],
            buckets=MODEL_BUCKETS_S,
            registry=r,
        )
        self.model_tokens = Counter(
            "skillet_model_tokens",
            "Model tokens: input (all prompt tokens, cached or not), output, and the parts of "
            "the input read from / written to the provider's prompt cache",
            ["provider", "direction"],
            registry=r,
        )
        self.model_usage_unreported = Counter(
            "skillet_model_usage_unreported",
            "Model calls whose answer did not report a token count (the server sent no usage, "
            "or no cache detail): those tokens are missing from skillet_model_tokens",
            ["provider", "direction"],
            registry=r,
        )
        self.replies_trimmed = Counter(
            "skillet_replies_trimmed",
            "Text answers cut by the output cap (SKILLET_MODEL_MAX_OUTPUT_TOKENS), trimmed to "
            "their last full sentence before sending (turn.reply_trimmed)",
            ["provider"],
            registry=r,
        )
        self.matched = Histogram(
            "skillet_turn_skills_matched",
            "Skills matched (bodies injected) per model turn",
            buckets=SKILL_COUNT_BUCKETS,
            registry=r,
        )
        self.probes = Counter(
            "skillet_skill_probes", "Probe keywords hit (skills not injected)", registry=r
        )
        # How often the classifier, not the keywords, decides what the model is told.
        self.intent_matches = Counter(
            "skillet_skill_intent_matches",
            "Skills injected because their catalog intent model accepted the message (their "
            "keywords did not match)",
            registry=r,
        )
        self.tool_calls = Counter(
            "skillet_tool_calls",
            "Tool calls by tool and result (ok or the teaching error's code), e.g. "
            'tool="read_skill_reference",result="storage_unavailable"',
            ["tool", "result"],
            registry=r,
        )
        self.handoffs = Counter(
            "skillet_handoffs",
            "Conversations handed to a person, by cause: tool (the model's handoff_to_human), "
            "customer (asked for a person), phone (the owner answered from the phone), "
            "console (a person took it over in the API or console)",
            ["cause"],
            registry=r,
        )
        self.presence_failures = Counter(
            "skillet_presence_failures",
            "Read marks and typing indicators that failed (never a turn's failure), by channel "
            "kind and call: reading (read + typing), stop_typing, read (a person opened the "
            "conversation)",
            ["kind", "call"],
            registry=r,
        )
        self.opt_choices = Counter(
            "skillet_opt_choices",
            "Customers' opt-out (PARAR, ...: choice out) and opt-in (VOLTAR: choice in) words "
            "recorded and confirmed",
            ["choice"],
            registry=r,
        )
        self.followups = Counter(
            "skillet_followups",
            "Due follow-ups decided by the follow-up tick: sent, or skipped with why "
            "(customer_wrote, opted_out, person_holds, template_unavailable)",
            ["result"],
            registry=r,
        )
        self.conversations_by_mode = Gauge(
            "skillet_conversations_by_mode",
            "Conversations not in mode agent, by mode (waiting, human), as counted by the "
            "last handoff tick",
            ["mode"],
            registry=r,
        )
        self.outbox = Counter(
            "skillet_outbox_deliveries",
            "Reply deliveries: sent, failed (row marked failed, by code), retry (the job will "
            "try again), parked (the number waits for a new access token), error (unexpected "
            "exception)",
            ["result", "code"],
            registry=r,
        )
        self.events = Counter(
            "skillet_events_deliveries",
            "Events webhook attempts settled: delivered (2xx), retried (due again after a "
            "backoff), failed (kept, no more attempts), by code (http_500, timeout, "
            "connection_failed, events_url_refused, events_url_cleared; none when delivered)",
            ["result", "code"],
            registry=r,
        )
        self.events_deleted = Counter(
            "skillet_events_retention_deleted",
            "Settled events webhook rows (delivered or failed) deleted by the hourly retention "
            "past SKILLET_EVENTS_RETENTION_DAYS",
            registry=r,
        )
        self.activation_batch = Histogram(
            "skillet_activation_batch_seconds",
            "Time to write one activation batch (success or failure)",
            buckets=BATCH_BUCKETS_S,
            registry=r,
        )
        self._activations = _ActivationStatsCollector()
        r.register(self._activations)
        self.curator_ticks = Counter(
            "skillet_curator_ticks",
            "Curator scheduler ticks: ran, busy (another worker held the lock), failed",
            ["status"],
            registry=r,
        )
        self.curator_runs = Counter(
            "skillet_curator_runs",
            "Curator org passes committed, by trigger",
            ["trigger"],
            registry=r,
        )
        self.curator_transitions = Counter(
            "skillet_curator_transitions",
            "Skill state transitions made by the curator",
            ["from_state", "to_state"],
            registry=r,
        )
        self.queue_jobs = Gauge(
            "skillet_queue_jobs",
            "Jobs in the arq queue (shared by all workers: aggregate with max, not sum): "
            "due (runnable now, including running ones) and deferred (scheduled later)",
            ["state"],
            registry=r,
        )
        self.health = Gauge(
            "skillet_dependency_up",
            "1 if the last health check of this worker reached the dependency",
            ["dependency"],
            registry=r,
        )
        ProcessCollector(registry=r)
        GCCollector(registry=r)
        self._zero_series()

    def _zero_series(self) -> None:
        """Every known label value's series, at 0 (see TURN_FAILURE_CODES)."""
        tools = sorted(self._tools)
        series: list[tuple[Counter, list[dict[str, str]]]] = [
            (self.turns_completed, [{"outcome": o} for o in sorted(COMPLETED_OUTCOMES)]),
            (
                self.turns_failed,
                [
                    {"outcome": o, "code": c}
                    for o in sorted(FAILED_OUTCOMES)
                    for c in TURN_FAILURE_CODES
                ],
            ),
            (self.replies_trimmed, [{"provider": p} for p in PROVIDERS]),
            *(
                (
                    counter,
                    [{"provider": p, "direction": d} for p in PROVIDERS for d in TOKEN_DIRECTIONS],
                )
                for counter in (self.model_tokens, self.model_usage_unreported)
            ),
            (
                self.tool_calls,
                [{"tool": t, "result": r} for t in tools for r in ("ok", StorageError.code)],
            ),
            (self.outbox, [{"result": r, "code": "none"} for r in DELIVERY_RESULTS]),
            (self.handoffs, [{"cause": c} for c in HANDOFF_CAUSES]),
            (self.opt_choices, [{"choice": c} for c in ("out", "in")]),
            (self.followups, [{"result": r} for r in FOLLOWUP_RESULTS]),
            (self.events, [{"result": r, "code": "none"} for r in EVENT_RESULTS.values()]),
            (self.curator_ticks, [{"status": s} for s in CURATOR_TICK_STATUSES]),
            (self.curator_runs, [{"trigger": t} for t in sorted(_TRIGGERS)]),
            (
                self.curator_transitions,
                [{"from_state": f, "to_state": t} for f, t in CURATOR_TRANSITIONS],
            ),
        ]
        for counter, label_sets in series:
            for labels in label_sets:
                counter.labels(**labels)

    # conversation.metrics.TurnMetrics
    def skills_matched(self, matched: int, probes: int, by_intent: int) -> None:
        self.matched.observe(matched)
        if probes:
            self.probes.inc(probes)
        if by_intent:
            self.intent_matches.inc(by_intent)

    def tool_called(self, tool: str, error_code: str | None) -> None:
        name = tool if tool in self._tools else "other"
        result = "ok" if error_code is None else code_label(error_code)
        self.tool_calls.labels(tool=name, result=result).inc()

    def handed_off(self, cause: str) -> None:
        self.handoffs.labels(cause=cause).inc()

    def presence_failed(self, kind: str, call: str) -> None:
        self.presence_failures.labels(kind=kind, call=call).inc()

    def opt_chosen(self, choice: str) -> None:
        self.opt_choices.labels(choice=choice if choice in ("out", "in") else "other").inc()

    def followup_decided(self, result: str) -> None:
        self.followups.labels(result=result if result in FOLLOWUP_RESULTS else "other").inc()

    def conversations_in_mode(self, counts: dict[str, int]) -> None:
        for mode in ("waiting", "human"):
            self.conversations_by_mode.labels(mode=mode).set(counts.get(mode, 0))

    # The job layer (worker.metered)
    def turn_started(self, queue_wait_s: float | None) -> None:
        self.turns_started.inc()
        if queue_wait_s is not None:
            self.queue_wait.observe(max(queue_wait_s, 0.0))

    def turn_finished(self, outcome: str, code: str | None, run_s: float) -> None:
        if outcome in COMPLETED_OUTCOMES:
            self.turns_completed.labels(outcome=outcome).inc()
        else:
            outcome = outcome if outcome in FAILED_OUTCOMES else "error"
            self.turns_failed.labels(outcome=outcome, code=code_label(code)).inc()
        self.run_time.labels(outcome=outcome).observe(run_s)

    def model_called(self, latency_s: float, response: ModelResponse | None) -> None:
        """One model call; `response` None means it failed."""
        if response is None:
            self.model_latency.labels(provider="unknown", result="error").observe(latency_s)
            return
        provider = _provider(response.provider)
        self.model_latency.labels(provider=provider, result="ok").observe(latency_s)
        for direction, tokens in (
            ("input", response.input_tokens),
            ("output", response.output_tokens),
            ("cache_read", response.cache_read_tokens),
            ("cache_write", response.cache_write_tokens),
        ):
            if tokens is None:
                self.model_usage_unreported.labels(provider=provider, direction=direction).inc()
            elif tokens:
                self.model_tokens.labels(provider=provider, direction=direction).inc(tokens)
        if trims_reply(response):
            self.replies_trimmed.labels(provider=provider).inc()

    def delivery(self, result: str, code: str | None = None) -> None:
        self.outbox.labels(result=result, code=code_label(code)).inc()

    def event_settled(self, outcome: str, code: str | None) -> None:
        result = EVENT_RESULTS.get(outcome, "other")
        self.events.labels(result=result, code=code_label(code)).inc()

    def events_pruned(self, deleted: int) -> None:
        self.events_deleted.inc(deleted)

    def watch_activations(self, source: Callable[[], ActivationStats]) -> None:
        self._activations.source = source

    def watch_worker(self, state: WorkerState) -> None:
        self.in_progress.set_function(lambda: state.jobs_in_progress())
        self.draining.set_function(lambda: 1.0 if state.draining() else 0.0)

    def curator_ticked(self, result: TickResult) -> None:
        self.curator_ticks.labels(status=result.status).inc()
        for trigger, count in result.due.items():
            label = trigger if trigger in _TRIGGERS else "other"
            # `due` counts orgs per trigger; every due org gets a committed run or the
            # tick raises (counted as failed instead).
            self.curator_runs.labels(trigger=label).inc(count)
        for report in result.reports:
            for transition in report.transitioned:
                self.curator_transitions.labels(
                    from_state=_state(transition.from_state), to_state=_state(transition.to_state)
                ).inc()

    def curator_failed(self) -> None:
        self.curator_ticks.labels(status="failed").inc()

    def queue_depth(self, *, due: int, deferred: int) -> None:
        self.queue_jobs.labels(state="due").set(due)
        self.queue_jobs.labels(state="deferred").set(deferred)

    def dependency(self, name: str, up: bool) -> None:
        self.health.labels(dependency=name).set(1 if up else 0)


def _provider(value: str) -> str:
    if not value:
        return "unknown"
    return value if _PROVIDER.match(value) else "other"


def _state(value: str) -> str:
    text = str(value)
    return text if text in _STATES else "other"
