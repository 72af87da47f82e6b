"""The curator's arq cron job: a scheduler tick every `SKILLET_CURATOR_CHECK_EVERY_S`.

The job never raises: a failing tick is logged and counted (ctx["curator_stats"]) and the
next tick tries again. Only one tick runs at a time across workers (arq's unique cron job id
per tick, plus the tick's Postgres advisory lock for ticks that overlap).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import structlog
from arq import cron, func
from arq.cron import CronJob
from arq.worker import Function

from core.clock import Clock, system_clock
from core.tenancy import system_connection
from skills.curator import CuratorPolicy
from skills.curator_queries import prune_curator_runs
from skills.curator_run import PassOptions
from skills.curator_schedule import SchedulePolicy
from skills.curator_tick import run_curator_tick
from worker.metrics import WorkerMetrics
from worker.settings import Settings

log = structlog.get_logger(__name__)

CURATOR_TICK = "curator_tick"
# Old reports deleted per tick at most: a backlog drains over a few ticks, each one short.
PRUNE_BATCH = 5_000


@dataclass
class CuratorStats:
    ticks: int = 0
    busy: int = 0  # another worker's tick held the lock
    runs: int = 0  # org passes committed
    transitioned: int = 0
    failures: int = 0


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


async def curator_tick(ctx: dict[str, Any]) -> dict[str, Any]:
    """Run one tick; returns a JSON summary. Never raises (a failure is logged and counted)."""
    stats: CuratorStats = ctx.setdefault("curator_stats", CuratorStats())
    stats.ticks += 1
    metrics: WorkerMetrics | None = ctx.get("metrics")  # None: called outside a worker
    try:
        settings: Settings = ctx["settings"]
        clock: Clock = ctx.get("clock") or system_clock
        options = PassOptions(
            now=clock(), policy=curator_policy(settings), chunk_orgs=settings.curator_chunk_orgs
        )
        # Every org in one pass: deliberate system work under row-level security.
        async with system_connection(ctx["pool"]) as conn:
            result = await run_curator_tick(
                conn, now=options.now, schedule=schedule_policy(settings), options=options
            )
            pruned = 0
            if result.status == "ran" and settings.curator_runs_keep_days:
                pruned = await prune_curator_runs(
                    conn, settings.curator_runs_keep_days, PRUNE_BATCH
                )
    except Exception as exc:  # the worker must outlive any curator failure: log and count
        stats.failures += 1
        if metrics is not None:
            metrics.curator_failed()
        code = getattr(exc, "code", type(exc).__name__)
        log.error("curator.tick_failed", error_code=code, error=repr(exc)[:300], **vars(stats))
        return {"status": "failed", "error": code}
    summary = {**result.summary(), "pruned": pruned}
    if metrics is not None:
        metrics.curator_ticked(result)
    if result.status == "busy":
        stats.busy += 1
    stats.runs += summary["runs"]
    stats.transitioned += summary["transitioned"]
    if summary["runs"] or pruned:
        log.info("curator.tick", **summary)
    return summary


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
        curator_tick,
        name=CURATOR_TICK,
        second=second,
        minute=minute,
        timeout=tick_timeout_s(settings),
        max_tries=1,
    )


def curator_function(settings: Settings) -> Function:
    """The tick as a plain function, for a worker that does not schedule it (burst mode, or
    the curator disabled) but may still pick up a tick another worker enqueued."""
    return func(curator_tick, name=CURATOR_TICK, timeout=tick_timeout_s(settings), max_tries=1)
