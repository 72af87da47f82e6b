"""The worker's periodic jobs: the curator's tick, the outbox sweep, the conversation sweep,
the handoff tick, the events delivery, the follow-up tick, the daily template sync, the
media retention and the events retention; when each runs, its timeout, and the side jobs a
worker that does not schedule them still runs (a tick or sweep another worker enqueued).

Every side job's timeout is at most a turn's: arq re-runs a crashed worker's jobs only after
the longest function timeout + 10 s, so a long side job would delay every lost turn. The
seconds are spread so no two start together: curator at 0, outbox at 30, conversations at
7/22/37/52, handoffs at 45, follow-ups at 15, events every 5 s from 4 (4, 9, ..., 59), the
template sync at 03:17:41 UTC, media retention at minute 17, second 15, events retention
at minute 47, second 25.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from consolidation.backends import LexicalBackend, SimilarityBackend
from consolidation.distill import Limits
from consolidation.embeddings import EmbeddingsBackend
from consolidation.gates import Pressure
from consolidation.measure import VectorBackend
from consolidation.run import ConsolidationConfig
from events.backoff import RetryPolicy
from events.delivery import DeliveryConfig
from jobs.context import CuratorConfig, arq_job
from jobs.conversation_sweep import CONVERSATION_SWEEP, conversation_sweep
from jobs.curator_tick import CURATOR_TICK, curator_tick
from jobs.events_delivery import EVENTS_DELIVERY, events_delivery
from jobs.events_retention import EVENTS_RETENTION, events_retention
from jobs.followup_tick import FOLLOWUP_TICK, followup_tick
from jobs.handoff_tick import HANDOFF_TICK, handoff_tick
from jobs.media_retention import MEDIA_RETENTION, media_retention
from jobs.outbox_sweep import OUTBOX_SWEEP, outbox_sweep
from jobs.template_sync import TEMPLATE_SYNC, TemplateSyncConfig, template_sync
from similarity import choice
from similarity.backend import EMBEDDINGS
from skills.curator import CuratorPolicy
from skills.curator.schedule import SchedulePolicy
from worker.settings import Settings

SWEEP_TIMEOUT_S = 30
# Past the coalescing window: a job deferred by it is not yet late.
SWEEP_SLACK_S = 5.0
CONVERSATION_SWEEP_SECONDS = {7, 22, 37, 52}
OUTBOX_SWEEP_SECONDS = {30}
HANDOFF_TICK_SECONDS = {45}
FOLLOWUP_TICK_SECONDS = {15}
# Once a day, at 03:17 UTC (minute 17 of hour 3: off the hour, when few customers write).
TEMPLATE_SYNC_SECONDS, TEMPLATE_SYNC_MINUTES, TEMPLATE_SYNC_HOURS = {41}, {17}, {3}
MEDIA_RETENTION_SECONDS, MEDIA_RETENTION_MINUTES = {15}, {17}  # once an hour
EVENTS_RETENTION_SECONDS, EVENTS_RETENTION_MINUTES = {25}, {47}  # once an hour
EVENTS_DELIVERY_SECONDS = set(range(4, 60, 5))
# Past a pass's job timeout: a claim older than that belongs to no live pass.
EVENTS_CLAIM_MARGIN_S = 10.0
# arq re-runs a dead worker's job after its timeout + 10 s; a claim outliving that by a
# margin belongs to a send that can no longer be in flight.
CLAIM_MARGIN_S = 30

JobFunction = Callable[..., Coroutine[Any, Any, Any]]


@dataclass(frozen=True)
class PeriodicJob:
    """One periodic job: its arq name, its function, when it runs and its timeout."""

    name: str
    job: JobFunction
    second: set[int]
    minute: set[int] | None
    timeout_s: int
    hour: set[int] | None = None

    def cron_job(self) -> CronJob:
        """On its schedule, for a worker that schedules it."""
        return cron(
            arq_job(self.job),
            name=self.name,
            second=self.second,
            minute=self.minute,
            hour=self.hour,
            timeout=self.timeout_s,
            max_tries=1,
        )

    def function(self) -> Function:
        """As a plain function, for a worker that does not schedule it (burst mode, or
        disabled) but may still pick up one another worker enqueued."""
        return func(arq_job(self.job), name=self.name, timeout=self.timeout_s, max_tries=1)


def within_turn_timeout(timeout_s: int, settings: Settings) -> int:
    return min(timeout_s, settings.job_timeout_s)


def cron_fields(every_s: int) -> tuple[set[int], set[int] | None]:
    """arq cron (second, minute) for "every `every_s` seconds": a divisor of 60, or whole
    minutes dividing 60 (minute None = every minute)."""
    if 60 % every_s == 0:
        return set(range(0, 60, every_s)), None
    if every_s % 60 == 0 and 3600 % every_s == 0:
        return {0}, set(range(0, 60, every_s // 60))
    raise ValueError(f"cannot schedule every {every_s} s with cron fields")


def curator_job(settings: Settings) -> PeriodicJob:
    """A tick every `SKILLET_CURATOR_CHECK_EVERY_S`; the tick decides whether a pass is due."""
    second, minute = cron_fields(settings.curator_check_every_s)
    timeout_s = within_turn_timeout(settings.curator_timeout_s, settings)
    return PeriodicJob(CURATOR_TICK, curator_tick, second, minute, timeout_s)


def outbox_job(settings: Settings) -> PeriodicJob:
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(OUTBOX_SWEEP, outbox_sweep, OUTBOX_SWEEP_SECONDS, None, timeout_s)


def conversation_job(settings: Settings) -> PeriodicJob:
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(
        CONVERSATION_SWEEP, conversation_sweep, CONVERSATION_SWEEP_SECONDS, None, timeout_s
    )


def handoff_job(settings: Settings) -> PeriodicJob:
    """Once a minute: idle conversations back to the agent, one notice to waiting customers."""
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(HANDOFF_TICK, handoff_tick, HANDOFF_TICK_SECONDS, None, timeout_s)


def followup_job(settings: Settings) -> PeriodicJob:
    """Once a minute: the due follow-ups sent (or skipped, saying why)."""
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(FOLLOWUP_TICK, followup_tick, FOLLOWUP_TICK_SECONDS, None, timeout_s)


def template_job(settings: Settings) -> PeriodicJob:
    """Once a day: every Cloud API number's templates read again from its WABA."""
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S * 10, settings)
    return PeriodicJob(
        TEMPLATE_SYNC,
        template_sync,
        TEMPLATE_SYNC_SECONDS,
        TEMPLATE_SYNC_MINUTES,
        timeout_s,
        hour=TEMPLATE_SYNC_HOURS,
    )


def template_sync_config(settings: Settings) -> TemplateSyncConfig:
    token = settings.whatsapp_access_token
    return TemplateSyncConfig(
        base_url=settings.graph_api_base_url,
        global_token=None if token is None else token.get_secret_value(),
        timeout_s=settings.send_timeout_s,
    )


def media_retention_job(settings: Settings) -> PeriodicJob:
    """Once an hour: media past SKILLET_MEDIA_RETENTION_DAYS deleted (the text stays)."""
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(
        MEDIA_RETENTION,
        media_retention,
        MEDIA_RETENTION_SECONDS,
        MEDIA_RETENTION_MINUTES,
        timeout_s,
    )


def events_retention_job(settings: Settings) -> PeriodicJob:
    """Once an hour: settled events past SKILLET_EVENTS_RETENTION_DAYS deleted."""
    timeout_s = within_turn_timeout(SWEEP_TIMEOUT_S, settings)
    return PeriodicJob(
        EVENTS_RETENTION,
        events_retention,
        EVENTS_RETENTION_SECONDS,
        EVENTS_RETENTION_MINUTES,
        timeout_s,
    )


def events_job(settings: Settings) -> PeriodicJob:
    """Room for a batch's requests (one timeout) twice over, at least a sweep's 30 s."""
    timeout_s = within_turn_timeout(
        max(SWEEP_TIMEOUT_S, int(2 * settings.events_timeout_s) + 10), settings
    )
    return PeriodicJob(EVENTS_DELIVERY, events_delivery, EVENTS_DELIVERY_SECONDS, None, timeout_s)


def events_config(settings: Settings) -> DeliveryConfig:
    """What the delivery reads from the job context, built once at the worker's startup."""
    timeout_s = events_job(settings).timeout_s
    return DeliveryConfig(
        policy=RetryPolicy(
            base_s=settings.events_backoff_base_s,
            max_s=settings.events_backoff_max_s,
            max_attempts=settings.events_max_attempts,
            max_age_s=float(settings.events_max_age_s),
        ),
        batch_size=settings.events_batch_size,
        timeout_s=settings.events_timeout_s,
        allow_private=settings.events_allow_private_urls,
        lease_s=timeout_s + EVENTS_CLAIM_MARGIN_S,
        # A batch started past this would end after arq cancelled the pass.
        budget_s=max(timeout_s - settings.events_timeout_s - 2.0, 0.0),
    )


def curator_config(settings: Settings) -> CuratorConfig:
    """What the tick reads from the job context, built once at the worker's startup."""
    return CuratorConfig(
        policy=curator_policy(settings),
        schedule=schedule_policy(settings),
        chunk_orgs=settings.curator_chunk_orgs,
        runs_keep_days=settings.curator_runs_keep_days,
        consolidation=consolidation_config(settings),
    )


def consolidation_config(settings: Settings) -> ConsolidationConfig:
    """The gates, package limits and similarity backend of consolidation."""
    limits = settings.package_limits()
    return ConsolidationConfig(
        pressure=Pressure(
            index_budget_bytes=settings.index_budget_bytes,
            min_skills=settings.consolidate_min_skills,
        ),
        limits=Limits(
            max_files=limits.max_files,
            max_total_bytes=limits.max_total_bytes,
            max_file_bytes=limits.max_file_bytes,
        ),
        backend=similarity_backend(settings),
    )


def similarity_backend(settings: Settings) -> SimilarityBackend:
    """The backend SKILLET_SIMILARITY_BACKEND chooses (similarity.choice): the embeddings
    server, the embedded model (loaded at its first use, in a thread), or lexical."""
    embedder = choice.embedder(settings.similarity_config())
    if embedder is None:
        return LexicalBackend()
    if embedder.name == EMBEDDINGS:
        key = settings.embeddings_api_key
        return EmbeddingsBackend(
            settings.embeddings_base_url or "http://127.0.0.1:9",
            settings.embeddings_model or "",
            api_key=None if key is None else key.get_secret_value(),
            timeout_s=settings.embeddings_timeout_s,
        )
    return VectorBackend(embedder)


def curator_policy(settings: Settings) -> CuratorPolicy:
    return CuratorPolicy(
        stale_after=timedelta(days=settings.curator_stale_after_days),
        archive_after=timedelta(days=settings.curator_archive_after_days),
    )


def schedule_policy(settings: Settings) -> SchedulePolicy:
    return SchedulePolicy(
        idle_s=settings.curator_idle_s,
        floor_s=settings.curator_floor_s,
        every_s=settings.curator_every_s,
    )


def sweep_after_s(settings: Settings) -> float:
    """How old a waiting message must be before the conversation sweep wakes it."""
    return settings.coalesce_ms / 1000 + SWEEP_SLACK_S


def abandoned_after_s(settings: Settings) -> float:
    """How old a delivery claim must be before the outbox sweep fails it."""
    return float(settings.job_timeout_s + CLAIM_MARGIN_S)


def periodic_jobs(settings: Settings, *, burst: bool) -> tuple[list[CronJob], list[Function]]:
    """The cron jobs this worker schedules, and the side functions it runs unscheduled.

    Long-running workers schedule what is enabled; a burst worker exits when the queue is
    empty and must not wait for (or enqueue) the next tick, so it schedules nothing."""
    enabled = {
        CURATOR_TICK: (curator_job(settings), settings.curator_enabled),
        OUTBOX_SWEEP: (outbox_job(settings), settings.outbox_sweep_enabled),
        CONVERSATION_SWEEP: (conversation_job(settings), settings.conversation_sweep_enabled),
        # Nothing to do when both clocks are off (0 s): the job still runs if enqueued.
        HANDOFF_TICK: (
            handoff_job(settings),
            bool(settings.human_idle_s or settings.handoff_wait_s),
        ),
        EVENTS_DELIVERY: (events_job(settings), settings.events_delivery_enabled),
        # A cap of 0 turns follow-ups off: nothing can be scheduled, so nothing is due.
        FOLLOWUP_TICK: (followup_job(settings), settings.followups_per_conversation > 0),
        TEMPLATE_SYNC: (template_job(settings), settings.template_sync_enabled),
        MEDIA_RETENTION: (media_retention_job(settings), True),
        # Always: the table would otherwise grow forever (pending events are never deleted).
        EVENTS_RETENTION: (events_retention_job(settings), True),
    }
    cron_jobs: list[CronJob] = []
    functions: list[Function] = []
    for job, on in enabled.values():
        if on and not burst:
            cron_jobs.append(job.cron_job())
        else:
            functions.append(job.function())
    return cron_jobs, functions
