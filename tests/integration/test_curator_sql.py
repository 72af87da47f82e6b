"""The SQL twin of the curator's rules equals the Python reference, case by case and per report."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timedelta

import asyncpg

from skills.curator import CuratorPolicy, SkillRecord, next_state, plan_report
from skills.curator.run import run_curator_for
from tests.integration.curator_support import NOW, install, options
from tests.integration.support import create_org

STATES = ("active", "stale", "archived")
STALE_CUTOFF, ARCHIVE_CUTOFF = CuratorPolicy().cutoffs(NOW)
TICK = timedelta(microseconds=1)


def _anchors() -> list[datetime | None]:
    """Never active, each cutoff and a microsecond either side, and points in between."""
    around = [c + d for c in (STALE_CUTOFF, ARCHIVE_CUTOFF) for d in (-TICK, timedelta(0), TICK)]
    spread = [NOW - timedelta(days=d) for d in (0, 1, 29, 45, 89, 120, 365, -1)]
    return [None, *around, *spread]


async def test_curator_next_state_equals_next_state_on_every_case(db: asyncpg.Connection) -> None:
    rng = random.Random(7)
    cases = [(s, a) for s in STATES for a in _anchors()]
    cases += [
        (rng.choice(STATES), NOW - timedelta(seconds=rng.uniform(-86_400, 200 * 86_400)))
        for _ in range(5_000)
    ]
    rows = await db.fetch(
        "select curator_next_state(s, a, $3, $4) as sql_state "
        "from unnest($1::text[], $2::timestamptz[]) with ordinality as t(s, a, n) order by n",
        [s for s, _ in cases],
        [a for _, a in cases],
        STALE_CUTOFF,
        ARCHIVE_CUTOFF,
    )
    mismatches = [
        (state, anchor, row["sql_state"])
        for (state, anchor), row in zip(cases, rows, strict=True)
        if row["sql_state"] != next_state(state, anchor, STALE_CUTOFF, ARCHIVE_CUTOFF)
    ]
    assert mismatches == []


async def test_a_pass_reports_exactly_what_the_python_reference_plans(
    db: asyncpg.Connection,
) -> None:
    rng = random.Random(11)
    orgs = sorted([await create_org(db) for _ in range(3)])
    records: dict[uuid.UUID, list[SkillRecord]] = {org: [] for org in orgs}
    for org in orgs:
        for i in range(120):
            name = f"s{rng.randrange(10**6):06d}-{i}"
            created_by = rng.choice(["agent", "agent", "agent", "user", "platform"])
            has_usage = rng.random() > 0.1
            anchors = _anchors()
            record = SkillRecord(
                name=name,
                created_by=created_by,
                state=rng.choice(STATES) if has_usage else "active",
                pinned=has_usage and rng.random() < 0.1,
                last_activity_at=rng.choice(anchors) if has_usage else None,
            )
            records[org].append(record)
            await install(
                db,
                org,
                name,
                created_by=created_by,
                state=record.state,
                pinned=record.pinned,
                last_activity_at=record.last_activity_at,
                usage=has_usage,
            )
    expected = [plan_report(org, records[org], STALE_CUTOFF, ARCHIVE_CUTOFF) for org in orgs]

    reports = await run_curator_for(db, orgs, options(chunk_orgs=2))

    assert [r.to_json() for r in reports] == [r.to_json() for r in expected]
    assert sum(len(r.transitioned) for r in reports) > 50  # the data exercised every branch
