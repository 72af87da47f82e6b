"""One scheduler tick: under a cluster-wide lock, run the curator for every org that is due."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import asyncpg
import structlog

from core.db_errors import DATABASE_ERRORS
from skills.curator.queries import list_schedule_rows, try_lock_curator_tick, unlock_curator_tick
from skills.curator.rules import CuratorReport
from skills.curator.run import PassOptions, run_curator_for
from skills.curator.schedule import RunTrigger, SchedulePolicy, due_trigger

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class TickResult:
    """`busy`: another worker's tick holds the lock (it does the work); `ran`: this one did."""

    status: Literal["ran", "busy"]
    due: dict[str, int] = dataclasses.field(default_factory=dict)
    reports: tuple[CuratorReport, ...] = ()

    def summary(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "due": self.due,
            "runs": len(self.reports),
            "transitioned": sum(len(r.transitioned) for r in self.reports),
        }


async def run_curator_tick(
    conn: asyncpg.Connection, *, now: datetime, schedule: SchedulePolicy, options: PassOptions
) -> TickResult:
    """Decide per org with `due_trigger`, then run the due orgs set-wise, one trigger at a time.

    The tick lock is a session advisory lock held while the runs commit their `curator_runs`
    rows, so a tick on another worker that gets the lock afterwards sees those runs and finds
    nothing due again: each trigger yields exactly one run. Raises what the pass raises.
    """
    if not await try_lock_curator_tick(conn):
        return TickResult(status="busy")
    try:
        due: dict[RunTrigger, list[uuid.UUID]] = {}
        for row in await list_schedule_rows(conn):
            trigger = due_trigger(now, row.last_run_at, row.last_activity_at, schedule)
            if trigger is not None:
                due.setdefault(trigger, []).append(row.organization_id)
        reports: list[CuratorReport] = []
        for trigger, organization_ids in sorted(due.items()):
            run_options = dataclasses.replace(options, now=now, trigger=trigger, replayed=False)
            reports += await run_curator_for(conn, organization_ids, run_options)
    finally:
        await _unlock(conn)
    return TickResult(
        status="ran", due={str(t): len(orgs) for t, orgs in due.items()}, reports=tuple(reports)
    )


async def _unlock(conn: asyncpg.Connection) -> None:
    try:
        await unlock_curator_tick(conn)
    except DATABASE_ERRORS as exc:
        # A session lock dies with its connection, and the pool's release runs
        # pg_advisory_unlock_all() anyway: the lock cannot outlive this tick.
        log.warning("curator.tick_unlock_failed", error=repr(exc)[:200])
