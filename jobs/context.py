"""The typed arq context the worker's startup fills and every job reads (the inbound turn
and the cron jobs alike)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypedDict

from consolidation.run import ConsolidationConfig
from conversation.holder import TurnDeps
from core.clock import Clock
from events.delivery import DeliveryConfig
from skills.curator import CuratorPolicy
from skills.curator.schedule import SchedulePolicy
from skills.curator.tick import TickResult


class CronMetrics(Protocol):
    """What the cron and side jobs report to the worker's metrics."""

    def curator_ticked(self, result: TickResult) -> None: ...

    def curator_failed(self) -> None: ...

    def delivery(self, result: str, code: str | None = None) -> None: ...

    def conversations_in_mode(self, counts: dict[str, int]) -> None: ...
    def event_settled(self, outcome: str, code: str | None) -> None: ...

    def handed_off(self, cause: str) -> None: ...

    def followup_decided(self, result: str) -> None: ...

    def events_pruned(self, deleted: int) -> None: ...


@dataclass(frozen=True)
class CuratorConfig:
    policy: CuratorPolicy
    schedule: SchedulePolicy
    chunk_orgs: int
    runs_keep_days: int  # 0: reports are kept forever
    consolidation: ConsolidationConfig | None = None  # None: no consolidation after a pass


@dataclass
class CuratorStats:
    ticks: int = 0
    busy: int = 0  # another worker's tick held the lock
    runs: int = 0  # org passes committed
    transitioned: int = 0
    failures: int = 0


class JobContext(TypedDict, total=False):
    # Filled by arq for each job.
    job_id: str
    job_try: int
    enqueue_time: datetime
    redis: Any
    # Filled by the worker's startup.
    turn_deps: TurnDeps
    pool: Any
    max_tries: int
    retry_defer_s: float
    turn_deadline_s: float  # a turn's own deadline, inside arq's job timeout
    clock: Clock
    metrics: CronMetrics
    curator: CuratorConfig
    curator_stats: CuratorStats  # kept across ticks of one worker
    outbox_abandoned_after_s: float  # a claim older than this belongs to no live send
    customer_service_window_s: float  # a reply waiting for a new token fails past it
    sweep_after_s: float  # a message waiting longer than this with no holder is woken
    handoff_idle_s: int  # a person's silence before the agent takes back (0: never)
    handoff_wait_s: int  # a customer's wait for a person before one notice (0: never)
    events: DeliveryConfig  # the events webhook's delivery (jobs.events_delivery)
    echo_grace_s: float  # an echo is settled no sooner than this after it arrived
    templates: Any  # jobs.template_sync.TemplateSyncConfig (the daily template sync)
    media_objects: Any  # where customers' media is stored (jobs.media_retention.MediaObjects)
    media_retention_days: int  # stored media is deleted this long after it was stored
    events_retention_days: int  # settled webhook events are deleted this long after recorded


def arq_job(job: Callable[..., Awaitable[Any]]) -> Any:
    """A job for arq's `func`/`cron`, which type the context as `dict[str, Any]`: ours is the
    same dict, typed (a TypedDict is not a dict subtype to mypy, hence the one cast here)."""
    return job
