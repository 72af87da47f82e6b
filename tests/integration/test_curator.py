"""The curator on real Postgres: the seed's scenarios, fail-closed writes, concurrency, dry runs."""

from __future__ import annotations

import asyncio
import json
import uuid

import asyncpg
import pytest
from structlog.testing import capture_logs

from core.db import connect
from skills.curator.errors import CuratorRunError, OrganizationNotFound
from skills.curator.run import run_curator, run_curator_all, run_curator_for
from skills.usage import UsageBump, UsageEvent, UsageStore
from tests.integration.curator_support import NOW, days_ago, install, options, states
from tests.integration.support import create_org, wait_until_waiting_on_lock
from worker.settings import Settings


async def test_the_seed_scenarios(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "idle-45", last_activity_at=days_ago(45))
    await install(db, org, "idle-120", last_activity_at=days_ago(120))
    await install(db, org, "stale-used", state="stale", last_activity_at=days_ago(2))
    await install(db, org, "pinned-365", pinned=True, last_activity_at=days_ago(365))
    await install(db, org, "never-used", usage=False)
    await install(db, org, "never-used-row", last_activity_at=None)
    await install(db, org, "user-skill", created_by="user", last_activity_at=days_ago(400))
    await install(db, org, "fresh", last_activity_at=days_ago(1))
    quiet = await create_org(db)
    await install(db, quiet, "fresh", last_activity_at=days_ago(1))
    revisions = await _revisions(db, org, quiet)

    report = await run_curator(db, org, options())
    await run_curator(db, quiet, options())

    assert report.to_json() == {
        "organization_id": str(org),
        "transitioned": [
            {"name": "idle-120", "from": "active", "to": "archived"},  # skips stale
            {"name": "idle-45", "from": "active", "to": "stale"},
            {"name": "stale-used", "from": "stale", "to": "active"},
        ],
        "skipped": [
            {"name": "fresh", "reason": "no-change"},
            {"name": "never-used", "reason": "no-change"},
            {"name": "never-used-row", "reason": "no-change"},
            {"name": "pinned-365", "reason": "pinned"},
            {"name": "user-skill", "reason": "not-agent-created"},
        ],
    }
    assert await states(db, org) == {
        "idle-45": "stale",
        "idle-120": "archived",
        "stale-used": "active",
        "pinned-365": "active",
        "never-used-row": "active",
        "user-skill": "active",
        "fresh": "active",
    }
    archived_at = await db.fetchval(
        "select archived_at from skill_usage where organization_id = $1 and skill_name = $2",
        org,
        "idle-120",
    )
    assert archived_at == NOW
    # Never deletes: every version and pointer is still there.
    assert await db.fetchval("select count(*) from skill_pointers where organization_id = $1", org)
    assert (
        await db.fetchval("select count(*) from skill_versions where organization_id = $1", org)
        == 8
    )

    # Turns see it at once: the org's catalog revision moved (once for the pass), the
    # untouched org's did not.
    after = await _revisions(db, org, quiet)
    assert (after[0] - revisions[0], after[1] - revisions[1]) == (1, 0)

    [run] = await db.fetch("select * from curator_runs where organization_id = $1", org)
    assert run["trigger"] == "manual" and run["ran_at"] == NOW and not run["replayed"]
    assert json.loads(run["transitioned"]) == report.to_json()["transitioned"]
    assert json.loads(run["skipped"]) == report.to_json()["skipped"]


async def _revisions(db: asyncpg.Connection, *orgs: uuid.UUID) -> tuple[int, ...]:
    sql = (
        "select coalesce(max(revision), 0) from skill_catalog_revisions where organization_id = $1"
    )
    return tuple([await db.fetchval(sql, org) for org in orgs])


async def test_a_second_pass_changes_nothing_and_archived_stays_archived(
    db: asyncpg.Connection,
) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45))
    await run_curator(db, org, options())
    later = await run_curator(db, org, options(NOW.replace(year=2027)))
    assert [t.to_json() for t in later.transitioned] == [
        {"name": "old", "from": "stale", "to": "archived"}
    ]
    again = await run_curator(db, org, options(NOW.replace(year=2028)))
    assert again.transitioned == () and [s.reason for s in again.skipped] == ["no-change"]


FAIL_ON = """
create or replace function fail_usage_update() returns trigger
language plpgsql as $$ begin
    if new.skill_name = 'boom' then raise exception 'disk full (test)'; end if;
    return new;
end; $$;
create trigger fail_usage_update before update on skill_usage
for each row execute function fail_usage_update();
"""
RESTORE = """
drop trigger if exists fail_usage_update on skill_usage;
drop function if exists fail_usage_update();
"""


async def test_a_failing_write_aborts_and_reports_nothing_unsaved(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "aaa-old", last_activity_at=days_ago(45))
    await install(db, org, "boom", last_activity_at=days_ago(120))
    await install(db, org, "zzz-old", last_activity_at=days_ago(100))
    await db.execute(FAIL_ON)
    try:
        with pytest.raises(CuratorRunError) as caught:
            await run_curator(db, org, options())
    finally:
        await db.execute(RESTORE)
    assert caught.value.saved == ()
    assert caught.value.code == "curator_run_failed" and caught.value.retryable
    assert await states(db, org) == {"aaa-old": "active", "boom": "active", "zzz-old": "active"}
    assert await db.fetchval("select count(*) from curator_runs") == 0


async def test_a_failing_chunk_keeps_only_the_committed_chunks_reported(
    db: asyncpg.Connection,
) -> None:
    good, bad = sorted([await create_org(db), await create_org(db)])
    await install(db, good, "old", last_activity_at=days_ago(45))
    await install(db, bad, "old", last_activity_at=days_ago(45))
    await install(db, bad, "boom", last_activity_at=days_ago(45))
    await db.execute(FAIL_ON)
    try:
        with pytest.raises(CuratorRunError) as caught:
            await run_curator_for(db, [bad, good], options(chunk_orgs=1))
    finally:
        await db.execute(RESTORE)
    [saved] = caught.value.saved
    assert saved.organization_id == good
    assert [t.name for t in saved.transitioned] == ["old"]
    assert await states(db, good) == {"old": "stale"}
    assert await states(db, bad) == {"old": "active", "boom": "active"}
    runs = await db.fetch("select organization_id from curator_runs")
    assert [r["organization_id"] for r in runs] == [good]


async def test_two_concurrent_runs_transition_each_skill_exactly_once(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    for i in range(60):
        await install(db, org, f"s{i:02d}", last_activity_at=days_ago(30 + i * 2))
    first, second = await connect(settings.database_url), await connect(settings.database_url)
    try:
        reports = await asyncio.gather(
            run_curator(first, org, options()), run_curator(second, org, options())
        )
    finally:
        await first.close()
        await second.close()
    moved = [t.name for r in reports for t in r.transitioned]
    assert sorted(moved) == [f"s{i:02d}" for i in range(60)]  # each once, by one of the runs
    assert sum(1 for r in reports if r.transitioned) == 1
    assert (
        await db.fetchval("select count(*) from curator_runs where organization_id = $1", org) == 2
    )


async def test_dry_run_reports_without_writing(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "old", last_activity_at=days_ago(45))
    report = await run_curator(db, org, options(dry_run=True))
    assert [t.to_json() for t in report.transitioned] == [
        {"name": "old", "from": "active", "to": "stale"}
    ]
    assert await states(db, org) == {"old": "active"}
    assert await db.fetchval("select count(*) from curator_runs") == 0


async def test_all_orgs_in_chunks_one_run_row_each(db: asyncpg.Connection) -> None:
    orgs = [await create_org(db) for _ in range(5)]
    for org in orgs:
        await install(db, org, "old", last_activity_at=days_ago(45))
    reports = await run_curator_all(db, options(chunk_orgs=2))
    assert [r.organization_id for r in reports] == sorted(orgs)
    assert all([t.name for t in r.transitioned] == ["old"] for r in reports)
    assert await db.fetchval("select count(*) from curator_runs") == 5


async def test_an_unknown_org_is_refused(db: asyncpg.Connection) -> None:
    with pytest.raises(OrganizationNotFound):
        await run_curator(db, uuid.uuid4(), options())


async def test_a_turn_using_a_skill_mid_pass_wins_and_the_report_stays_true(
    db: asyncpg.Connection, settings: Settings
) -> None:
    """A usage bump that commits while the pass waits on its row: the pass rolls back and
    redoes the chunk, so the skill just used is not archived nor reported as moved."""
    org = await create_org(db)
    await install(db, org, "used-now", last_activity_at=days_ago(45))
    await install(db, org, "idle", last_activity_at=days_ago(45))
    turn, curator = await connect(settings.database_url), await connect(settings.database_url)
    try:
        bump = turn.transaction()
        await bump.start()
        await UsageStore(lambda: NOW).record(turn, [UsageBump(org, "used-now", UsageEvent.USE)])
        running = asyncio.create_task(run_curator(curator, org, options()))
        await wait_until_waiting_on_lock(settings.database_url, curator.get_server_pid())
        assert not running.done()  # the pass waits on the bumped row's lock
        with capture_logs() as logs:
            await bump.commit()
            report = await running
    finally:
        await turn.close()
        await curator.close()
    assert [t.to_json() for t in report.transitioned] == [
        {"name": "idle", "from": "active", "to": "stale"}
    ]
    assert [s.to_json() for s in report.skipped] == [{"name": "used-now", "reason": "no-change"}]
    assert await states(db, org) == {"idle": "stale", "used-now": "active"}
    assert await db.fetchval("select count(*) from curator_runs") == 1
    assert "curator.chunk_retried" in [e["event"] for e in logs]
