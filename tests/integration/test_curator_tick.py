"""The sleep-cycle scheduler on real Postgres/Redis: triggers, the cluster lock, the cron job."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from core.db import connect, create_pool
from jobs.context import JobContext
from jobs.conversation_sweep import CONVERSATION_SWEEP
from jobs.curator_tick import CURATOR_TICK, curator_tick
from jobs.events_delivery import EVENTS_DELIVERY
from jobs.events_retention import EVENTS_RETENTION
from jobs.followup_tick import FOLLOWUP_TICK
from jobs.handoff_tick import HANDOFF_TICK
from jobs.media_retention import MEDIA_RETENTION
from jobs.outbox_sweep import OUTBOX_SWEEP
from jobs.template_sync import TEMPLATE_SYNC
from skills.curator.queries import TICK_LOCK_CLASS, TICK_LOCK_ID
from skills.curator.run import PassOptions
from skills.curator.schedule import SchedulePolicy
from skills.curator.tick import TickResult, run_curator_tick
from tests.integration.curator_support import NOW, days_ago, install
from tests.integration.support import close_between_jobs, create_org
from worker.app import build_worker
from worker.crons import curator_config
from worker.settings import Settings

SCHEDULE = SchedulePolicy(idle_s=300, floor_s=3600, every_s=21_600)


async def _message_at(db: asyncpg.Connection, org: uuid.UUID, at: datetime) -> None:
    """An inbound message whose database timestamp is `at` (the clock the tests inject)."""
    conversation = await db.fetchval(
        "insert into conversations (organization_id, channel, contact_id) "
        "values ($1, 'whatsapp', '5511999990000') "
        "on conflict (organization_id, channel, contact_id) do update set channel = 'whatsapp' "
        "returning id",
        org,
    )
    await db.execute(
        "insert into messages (organization_id, conversation_id, direction, channel, "
        "external_id, body, created_at) values ($1, $2, 'inbound', 'whatsapp', $3, 'oi', $4)",
        org,
        conversation,
        str(uuid.uuid4()),
        at,
    )


async def _tick(db: asyncpg.Connection, now: datetime) -> TickResult:
    return await run_curator_tick(db, now=now, schedule=SCHEDULE, options=PassOptions(now=now))


async def _runs(db: asyncpg.Connection) -> list[tuple[uuid.UUID, str, datetime]]:
    rows = await db.fetch("select organization_id, trigger, ran_at from curator_runs order by id")
    return [(r["organization_id"], r["trigger"], r["ran_at"]) for r in rows]


async def test_idle_and_ceiling_triggers_with_an_injected_clock(db: asyncpg.Connection) -> None:
    quiet, chatty = await create_org(db), await create_org(db)
    await install(db, quiet, "old", last_activity_at=days_ago(45))
    await install(db, chatty, "old", last_activity_at=days_ago(45))
    await _message_at(db, chatty, NOW - timedelta(minutes=10))

    first = await _tick(db, NOW)
    assert first.status == "ran" and first.due == {"ceiling": 1, "idle": 1}
    assert {(o, t) for o, t, _ in await _runs(db)} == {(quiet, "ceiling"), (chatty, "idle")}
    assert all(len(r.transitioned) == 1 for r in first.reports)

    # Nothing new: nothing due, tick after tick.
    for minutes in (1, 30, 90):
        assert (await _tick(db, NOW + timedelta(minutes=minutes))).reports == ()

    # The chatty org talks again at +2 h; quiet for 5 min at +2h05 -> one idle run.
    await _message_at(db, chatty, NOW + timedelta(hours=2))
    assert (await _tick(db, NOW + timedelta(hours=2, minutes=4))).reports == ()
    idle = await _tick(db, NOW + timedelta(hours=2, minutes=5))
    assert [(r.organization_id) for r in idle.reports] == [chatty] and idle.due == {"idle": 1}
    assert (await _tick(db, NOW + timedelta(hours=2, minutes=6))).reports == ()

    # Six hours after its run, the quiet org is due by the ceiling.
    ceiling = await _tick(db, NOW + timedelta(hours=6))
    assert [r.organization_id for r in ceiling.reports] == [quiet]
    assert ceiling.due == {"ceiling": 1}
    assert len(await _runs(db)) == 4


async def test_a_replayed_run_does_not_move_the_schedule(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(1))
    await db.execute(
        "insert into curator_runs (organization_id, trigger, ran_at, replayed, stale_cutoff, "
        "archive_cutoff, transitioned, skipped) values ($1, 'manual', $2, true, $2, $2, "
        "'[]', '[]')",
        org,
        NOW + timedelta(days=365),
    )
    assert [r.organization_id for r in (await _tick(db, NOW)).reports] == [org]


async def test_a_tick_held_elsewhere_is_busy(db: asyncpg.Connection, settings: Settings) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45))
    other = await connect(settings.database_url)
    try:
        await other.execute("select pg_advisory_lock($1, $2)", TICK_LOCK_CLASS, TICK_LOCK_ID)
        assert (await _tick(db, NOW)).status == "busy"
    finally:
        await other.close()  # the session lock dies with the connection
    assert (await _tick(db, NOW)).status == "ran"


async def test_concurrent_ticks_yield_exactly_one_run_per_trigger(
    db: asyncpg.Connection, settings: Settings
) -> None:
    orgs = [await create_org(db) for _ in range(3)]
    for org in orgs:
        await install(db, org, "old", last_activity_at=days_ago(45))
    conns = [await connect(settings.database_url) for _ in range(4)]
    try:
        # Workers whose clocks differ by a second, ticking at once.
        results = await asyncio.gather(
            *(_tick(c, NOW + timedelta(seconds=i)) for i, c in enumerate(conns))
        )
    finally:
        for conn in conns:
            await conn.close()
    assert sum(len(r.reports) for r in results) == 3
    assert sorted(o for o, _, _ in await _runs(db)) == sorted(orgs)


def _context(settings: Settings, pool: Any) -> JobContext:
    """What the worker's startup gives the tick, with a fixed clock."""
    return {"curator": curator_config(settings), "pool": pool, "clock": lambda: NOW}


async def test_the_cron_job_never_raises_and_counts_failures(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45))
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    ctx = _context(settings, pool)
    try:
        summary = await curator_tick(ctx)
    finally:
        await pool.close()
    assert summary == {
        "status": "ran",
        "due": {"ceiling": 1},
        "runs": 1,
        "transitioned": 1,
        "pruned": 0,
    }

    # The same job with its pool gone: a logged, counted failure, not an exception.
    failed = await curator_tick(ctx)
    assert failed["status"] == "failed"
    stats = ctx["curator_stats"]
    assert (stats.ticks, stats.runs, stats.transitioned, stats.failures) == (2, 1, 1, 1)


async def test_a_tick_prunes_old_reports_but_keeps_each_orgs_newest(
    db: asyncpg.Connection, settings: Settings
) -> None:
    busy, quiet = await create_org(db), await create_org(db)

    async def report(org: uuid.UUID, days: int, *, replayed: bool = False) -> None:
        await db.execute(
            """insert into curator_runs (organization_id, trigger, ran_at, replayed,
                   stale_cutoff, archive_cutoff, transitioned, skipped, created_at)
               values ($1, 'ceiling', now() - make_interval(days => $2), $3, now(), now(),
                       '[]', '[]', now() - make_interval(days => $2))""",
            org,
            days,
            replayed,
        )

    for days in (400, 200, 1):
        await report(busy, days)
    await report(busy, 250, replayed=True)
    await report(quiet, 300)  # its only scheduled run: kept however old
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        summary = await curator_tick(_context(settings, pool))
    finally:
        await pool.close()
    assert summary["pruned"] == 3
    left = await db.fetch(
        "select organization_id, (now() - created_at) > interval '250 days' as old "
        "from curator_runs order by created_at"
    )
    assert [(r["organization_id"], r["old"]) for r in left] == [(quiet, True), (busy, False)]

    keep_all = settings.model_copy(update={"curator_runs_keep_days": 0})
    await report(busy, 500)
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    try:
        again = await curator_tick(_context(keep_all, pool))
    finally:
        await pool.close()
    assert again["pruned"] == 0


async def test_only_long_running_enabled_workers_schedule_the_tick(settings: Settings) -> None:
    # async: arq's Worker() takes the running loop; a sync test would leave a new one unclosed
    scheduled = build_worker(settings, handle_signals=False)
    sweeps = [
        CURATOR_TICK,
        OUTBOX_SWEEP,
        CONVERSATION_SWEEP,
        HANDOFF_TICK,
        EVENTS_DELIVERY,
        FOLLOWUP_TICK,
        TEMPLATE_SYNC,
        MEDIA_RETENTION,
        EVENTS_RETENTION,
    ]
    # Media and events retention are always scheduled: neither keeps rows forever.
    assert [c.name for c in scheduled.cron_jobs] == sweeps
    burst = build_worker(settings, burst=True, handle_signals=False)
    assert burst.cron_jobs == [] and set(sweeps) <= set(burst.functions)
    disabled = build_worker(
        settings.model_copy(update={"curator_enabled": False}), handle_signals=False
    )
    assert [c.name for c in disabled.cron_jobs] == [
        OUTBOX_SWEEP,
        CONVERSATION_SWEEP,
        HANDOFF_TICK,
        EVENTS_DELIVERY,
        FOLLOWUP_TICK,
        TEMPLATE_SYNC,
        MEDIA_RETENTION,
        EVENTS_RETENTION,
    ]
    assert CURATOR_TICK in disabled.functions
    off = {"curator_enabled": False, "outbox_sweep_enabled": False}
    off["conversation_sweep_enabled"] = False
    off["events_delivery_enabled"] = False
    off["human_idle_s"] = off["handoff_wait_s"] = 0  # the handoff tick: both clocks off
    off["followups_per_conversation"] = 0
    off["template_sync_enabled"] = False
    neither = build_worker(settings.model_copy(update=off), handle_signals=False)
    assert [c.name for c in neither.cron_jobs] == [MEDIA_RETENTION, EVENTS_RETENTION]
    assert set(sweeps[1:]) <= set(neither.functions)


async def test_a_running_worker_runs_the_curator_on_its_schedule(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45, datetime.now(NOW.tzinfo)))
    # Lexical: the curator's schedule is under test, not a model loading and embedding in
    # the consolidation that follows the pass (the worker is closed while that job runs).
    every_second = settings.model_copy(
        update={"curator_check_every_s": 1, "similarity_backend": "lexical"}
    )
    worker = build_worker(every_second, handle_signals=False)
    task = asyncio.create_task(worker.async_run())
    try:
        for _ in range(600):
            if await db.fetchval("select count(*) from curator_runs"):
                break
            await asyncio.sleep(0.05)
    finally:
        await close_between_jobs(worker)  # the run's row commits before its job ends
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    [(run_org, trigger, _)] = await _runs(db)
    assert (run_org, trigger) == (org, "ceiling")
    assert (
        await db.fetchval("select state from skill_usage where organization_id = $1", org)
        == "stale"
    )
