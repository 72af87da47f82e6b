"""arq job `curator_tick`: one scheduler tick of the curator over every org.

The job never raises: a failing tick is logged and counted (ctx["curator_stats"]) and the
next tick tries again. Only one tick runs at a time across workers (arq's unique cron job id
per tick, plus the tick's Postgres advisory lock for ticks that overlap).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import structlog

from consolidation.tick import consolidate_after_pass
from core.clock import system_clock
from jobs.context import CuratorStats, JobContext
from skills.curator.queries import prune_curator_runs
from skills.curator.run import PassOptions
from skills.curator.tick import TickResult, run_curator_tick

log = structlog.get_logger(__name__)

CURATOR_TICK = "curator_tick"
# Old reports deleted per tick at most: a backlog drains over a few ticks, each one short.
PRUNE_BATCH = 5_000


async def curator_tick(ctx: JobContext) -> dict[str, Any]:
    """Run one tick; returns a JSON summary. Never raises (a failure is logged and counted)."""
    stats = ctx.setdefault("curator_stats", CuratorStats())
    stats.ticks += 1
    metrics = ctx.get("metrics")  # None: called outside a worker
    try:
        config = ctx["curator"]
        clock = ctx.get("clock") or system_clock
        options = PassOptions(now=clock(), policy=config.policy, chunk_orgs=config.chunk_orgs)
        # Every org in one pass, through the curator's narrow functions (skillet_curator_pass).
        async with ctx["pool"].acquire() as conn:
            result = await run_curator_tick(
                conn, now=options.now, schedule=config.schedule, options=options
            )
            pruned = 0
            if result.status == "ran" and config.runs_keep_days:
                pruned = await prune_curator_runs(conn, config.runs_keep_days, PRUNE_BATCH)
        consolidated = await _consolidate(ctx, result, options.now)
    except Exception as exc:  # the worker must outlive any curator failure: log and count
        stats.failures += 1
        if metrics is not None:
            metrics.curator_failed()
        code = getattr(exc, "code", type(exc).__name__)
        log.error("curator.tick_failed", error_code=code, error=repr(exc)[:300], **vars(stats))
        return {"status": "failed", "error": code}
    summary = {**result.summary(), "pruned": pruned}
    if consolidated:
        summary["consolidation"] = consolidated
    if metrics is not None:
        metrics.curator_ticked(result)
    if result.status == "busy":
        stats.busy += 1
    stats.runs += summary["runs"]
    stats.transitioned += summary["transitioned"]
    if summary["runs"] or pruned:
        log.info("curator.tick", **summary)
    return summary


async def _consolidate(ctx: JobContext, result: TickResult, now: datetime) -> dict[str, int]:
    """After the decay pass, the orgs it ran for (never raises: consolidate_after_pass)."""
    config = ctx["curator"].consolidation
    deps = ctx.get("turn_deps")
    if result.status != "ran" or config is None or deps is None or not result.reports:
        return {}
    organization_ids = [r.organization_id for r in result.reports]
    # The agents' models, so a real one may rewrite each umbrella's body.
    config = dataclasses.replace(config, models=deps.models)
    return await consolidate_after_pass(ctx["pool"], deps.store, organization_ids, config, now=now)
