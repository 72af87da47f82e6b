"""Scheduling of the curator's arq job (`jobs.curator_tick`): a tick every
`SKILLET_CURATOR_CHECK_EVERY_S`, its timeout, and its configuration from the settings."""

from __future__ import annotations

from datetime import timedelta

from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from jobs.context import CuratorConfig, arq_job
from jobs.curator_tick import CURATOR_TICK, curator_tick
from skills.curator import CuratorPolicy
from skills.curator_schedule import SchedulePolicy
from worker.settings import Settings


def curator_config(settings: Settings) -> CuratorConfig:
    """What the tick reads from the job context, built once at the worker's startup."""
    return CuratorConfig(
        policy=curator_policy(settings),
        schedule=schedule_policy(settings),
        chunk_orgs=settings.curator_chunk_orgs,
        runs_keep_days=settings.curator_runs_keep_days,
    )


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


def cron_fields(every_s: int) -> tuple[set[int], set[int] | None]:
    """arq cron (second, minute) for "every `every_s` seconds": a divisor of 60, or whole
    minutes dividing 60 (minute None = every minute)."""
    if 60 % every_s == 0:
        return set(range(0, 60, every_s)), None
    if every_s % 60 == 0 and 3600 % every_s == 0:
        return {0}, set(range(0, 60, every_s // 60))
    raise ValueError(f"cannot schedule every {every_s} s with cron fields")


def within_turn_timeout(timeout_s: int, settings: Settings) -> int:
    """A side job's timeout, never longer than a turn's: arq re-runs a crashed worker's jobs
    only after the longest function timeout + 10 s, so a long one would delay every lost turn."""
    return min(timeout_s, settings.job_timeout_s)


def tick_timeout_s(settings: Settings) -> int:
    return within_turn_timeout(settings.curator_timeout_s, settings)


def curator_cron_job(settings: Settings) -> CronJob:
    """The tick on its schedule, for a worker that schedules it."""
    second, minute = cron_fields(settings.curator_check_every_s)
    return cron(
        arq_job(curator_tick),
        name=CURATOR_TICK,
        second=second,
        minute=minute,
        timeout=tick_timeout_s(settings),
        max_tries=1,
    )


def curator_function(settings: Settings) -> Function:
    """The tick as a plain function, for a worker that does not schedule it (burst mode, or
    the curator disabled) but may still pick up a tick another worker enqueued."""
    return func(
        arq_job(curator_tick), name=CURATOR_TICK, timeout=tick_timeout_s(settings), max_tries=1
    )
