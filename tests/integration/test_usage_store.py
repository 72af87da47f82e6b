"""The usage store on real Postgres: atomic counts, activity stamps, read/write failure modes."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta

import asyncpg
import pytest
from structlog.testing import capture_logs

from core.db import connect
from skills.curator.errors import SkillNotInstalled, UsageWriteError
from skills.curator.run import run_curator
from skills.usage import UsageBump, UsageEvent, UsageStore
from tests.integration.curator_support import NOW, days_ago, install, options, states
from tests.integration.support import create_org
from worker.settings import Settings

UNKNOWN_ORG = uuid.UUID("00000000-0000-0000-0000-00000000dead")


class StepClock:
    """Returns the times it was given, in order, then repeats the last."""

    def __init__(self, *times: datetime) -> None:
        self._times = list(times)

    def __call__(self) -> datetime:
        return self._times.pop(0) if len(self._times) > 1 else self._times[0]


async def test_eight_concurrent_writers_of_a_hundred_bumps_count_800(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    await install(db, org, "frete", usage=False)
    store = UsageStore(lambda: NOW)
    conns = [await connect(settings.database_url) for _ in range(8)]

    async def writer(conn: asyncpg.Connection) -> None:
        for _ in range(100):
            await store.record(conn, [UsageBump(org, "frete", UsageEvent.USE)])

    try:
        await asyncio.gather(*(writer(c) for c in conns))
    finally:
        for conn in conns:
            await conn.close()
    record = await store.get(db, org, "frete")
    assert record is not None
    assert (record.use_count, record.view_count, record.patch_count) == (800, 0, 0)
    assert record.created_by == "agent"  # from the installed version


async def test_concurrent_mixed_batches_lose_nothing(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    names = ["a", "b", "c"]
    events = [UsageEvent.USE, UsageEvent.VIEW, UsageEvent.PATCH]
    store = UsageStore(lambda: NOW)
    conns = [await connect(settings.database_url) for _ in range(8)]

    async def writer(n: int, conn: asyncpg.Connection) -> None:
        for i in range(50):
            # Every batch touches every key, in a different order per writer.
            batch = [UsageBump(org, names[(n + i + k) % 3], events[k]) for k in range(3)]
            await store.record(conn, batch + batch)

    try:
        await asyncio.gather(*(writer(n, c) for n, c in enumerate(conns)))
    finally:
        for conn in conns:
            await conn.close()
    rows = await db.fetch(
        "select sum(use_count) u, sum(view_count) v, sum(patch_count) p from skill_usage "
        "where organization_id = $1",
        org,
    )
    assert (rows[0]["u"], rows[0]["v"], rows[0]["p"]) == (800, 800, 800)


async def test_last_activity_is_the_newest_event_never_creation(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "frete", usage=False)
    t1, t2 = NOW - timedelta(days=3), NOW - timedelta(days=1)
    store = UsageStore(StepClock(t1, t2, NOW - timedelta(days=10)))
    await store.record(db, [UsageBump(org, "frete", UsageEvent.VIEW)])
    first = await store.get(db, org, "frete")
    assert first is not None
    assert (first.last_viewed_at, first.last_used_at, first.last_activity_at) == (t1, None, t1)

    await store.record(db, [UsageBump(org, "frete", UsageEvent.USE)])
    # A late batch stamped with an older time never moves a stamp backwards.
    await store.record(db, [UsageBump(org, "frete", UsageEvent.PATCH)])
    record = await store.get(db, org, "frete")
    assert record is not None
    assert record.last_used_at == t2 and record.last_viewed_at == t1
    assert record.last_patched_at == NOW - timedelta(days=10)
    assert record.last_activity_at == t2
    assert (record.use_count, record.view_count, record.patch_count) == (1, 1, 1)


async def test_a_failed_read_is_no_record_and_logged(
    db: asyncpg.Connection, settings: Settings
) -> None:
    org = await create_org(db)
    await install(db, org, "frete", last_activity_at=days_ago(1))
    store = UsageStore(lambda: NOW)
    assert await store.get(db, org, "ausente") is None
    broken = await connect(settings.database_url)
    await broken.close()
    with capture_logs() as logs:
        assert await store.get(broken, org, "frete") is None
    assert [e["event"] for e in logs] == ["usage.read_failed"]


async def test_a_failed_write_raises(db: asyncpg.Connection, settings: Settings) -> None:
    org = await create_org(db)
    store = UsageStore(lambda: NOW)
    broken = await connect(settings.database_url)
    await broken.close()
    with pytest.raises(UsageWriteError) as caught:
        await store.record(broken, [UsageBump(org, "frete", UsageEvent.USE)])
    assert caught.value.retryable
    with pytest.raises(UsageWriteError):  # the server refuses: unknown organization (FK)
        await store.record(db, [UsageBump(UNKNOWN_ORG, "frete", UsageEvent.USE)])


async def test_restore_round_trip(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "frete", last_activity_at=days_ago(120))
    await run_curator(db, org, options())
    assert await states(db, org) == {"frete": "archived"}

    revision_sql = "select revision from skill_catalog_revisions where organization_id = $1"
    revision = await db.fetchval(revision_sql, org)
    restored_at = NOW + timedelta(hours=1)
    restored = await UsageStore(lambda: restored_at).restore(db, org, "frete")
    assert await db.fetchval(revision_sql, org) == revision + 1  # the next turn loads it
    assert restored.previous_state == "archived"
    assert restored.record.state == "active" and restored.record.archived_at is None
    assert restored.record.restored_at == restored_at
    assert restored.record.last_activity_at == restored_at

    # The next pass (a day later) does not archive it again.
    report = await run_curator(db, org, options(NOW + timedelta(days=1)))
    assert report.transitioned == () and await states(db, org) == {"frete": "active"}
    # Nor one a month later: the restore stamp ages like any activity.
    report = await run_curator(db, org, options(NOW + timedelta(days=31)))
    assert [t.to_json() for t in report.transitioned] == [
        {"name": "frete", "from": "active", "to": "stale"}
    ]


async def test_pin_exempts_from_the_curator_and_unpin_returns_it(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    await install(db, org, "frete", last_activity_at=days_ago(365))
    await install(db, org, "sem-uso", usage=False)
    store = UsageStore(lambda: NOW)
    assert (await store.set_pinned(db, org, "frete", True)).pinned
    assert (await store.set_pinned(db, org, "sem-uso", True)).pinned  # no row yet: created
    report = await run_curator(db, org, options())
    assert [(s.name, str(s.reason)) for s in report.skipped] == [
        ("frete", "pinned"),
        ("sem-uso", "pinned"),
    ]
    assert not (await store.set_pinned(db, org, "frete", False)).pinned
    report = await run_curator(db, org, options())
    assert [t.name for t in report.transitioned] == ["frete"]


async def test_pin_or_restore_of_a_skill_not_installed_is_refused(db: asyncpg.Connection) -> None:
    org = await create_org(db)
    store = UsageStore(lambda: NOW)
    with pytest.raises(SkillNotInstalled, match="não está instalada"):
        await store.set_pinned(db, org, "fantasma", True)
    with pytest.raises(SkillNotInstalled):
        await store.restore(db, org, "fantasma")
