"""Activation telemetry never breaks a turn, even when every insert fails, and loses no count
the curator judges by or a business reads: those are written by the reply's commit."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from tests.integration.support import create_org, enqueue, payload, publish, run_burst
from turn.activation_queries import ActivationRow
from worker.resources import Resources
from worker.settings import Settings

FAIL_INSERTS = """
create or replace function fail_activation_insert() returns trigger
language plpgsql as $$ begin raise exception 'activations disabled by the test'; end; $$;
create trigger fail_activation_insert before insert on skill_activations
for each row execute function fail_activation_insert();
"""

RESTORE = """
drop trigger if exists fail_activation_insert on skill_activations;
drop function if exists fail_activation_insert();
"""


async def test_turns_reply_while_activation_inserts_fail(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"], probes=["cep"])
    await db.execute(FAIL_INSERTS)
    try:
        await enqueue(
            settings,
            payload(org, "a", "qual o frete?"),
            payload(org, "b", "meu cep é 01310"),
            payload(org, "c", "frete grátis?"),
        )
        before = datetime.now(UTC).date()
        worker = await run_burst(settings)
        after = datetime.now(UTC).date()
    finally:
        await db.execute(RESTORE)
    assert worker.jobs_complete == 3 and worker.jobs_failed == 0
    sent = await db.fetchval(
        "select count(*) from outbox where organization_id = $1 and status = 'sent'", org
    )
    assert sent == 3
    assert await db.fetchval("select count(*) from skill_activations") == 0
    # Uses and the day's counts came with the replies, not with the failed telemetry.
    usage = await db.fetchrow(
        "select use_count, last_used_at from skill_usage where organization_id = $1", org
    )
    assert usage["use_count"] == 2 and usage["last_used_at"] is not None
    # On the day the turns ran (summed: a test run across midnight writes two days' rows).
    daily = await db.fetchrow(
        "select sum(hard_count), sum(probe_count), sum(capped_count), min(day), max(day) "
        "from skill_activation_daily where organization_id = $1 and skill_name = 'frete'",
        org,
    )
    assert tuple(daily.values())[:3] == (2, 1, 0)
    assert before <= daily["min"] <= daily["max"] <= after


async def test_matches_cut_by_the_injection_cap_are_counted_as_capped_not_as_probes(
    settings: Settings, db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    for name in ("a-pix", "b-pix", "c-pix", "d-pix"):
        await publish(db, resources.store, org, name, keywords=["pix"])
    await enqueue(settings, payload(org, "m", "aceita pix?"))
    await run_burst(settings)  # its shutdown flushes the raw rows
    raw = await db.fetch(
        "select skill_name, trigger from skill_activations where organization_id = $1 "
        "order by skill_name",
        org,
    )
    assert [tuple(r.values()) for r in raw][-1] == ("d-pix", "capped")
    daily = await db.fetch(
        "select skill_name, hard_count, probe_count, capped_count from skill_activation_daily "
        "where organization_id = $1 order by skill_name",
        org,
    )
    # Three injected (the default cap), the fourth cut: demand a skill served, not unmet.
    assert [tuple(r.values()) for r in daily] == [
        ("a-pix", 1, 0, 0),
        ("b-pix", 1, 0, 0),
        ("c-pix", 1, 0, 0),
        ("d-pix", 0, 0, 1),
    ]
    used = await db.fetch(
        "select skill_name, use_count from skill_usage where organization_id = $1 "
        "order by skill_name",
        org,
    )
    assert [(r["skill_name"], r["use_count"]) for r in used] == [
        ("a-pix", 1),
        ("b-pix", 1),
        ("c-pix", 1),
    ]


async def test_pending_activations_are_flushed_on_shutdown(
    db: asyncpg.Connection, resources: Resources
) -> None:
    org = await create_org(db)
    await publish(db, resources.store, org, "frete", keywords=["frete"])
    rows = [ActivationRow(org, "frete", None, "probe", f"job-{n}") for n in range(500)]
    resources.recorder.record(rows)
    await resources.recorder.close(timeout_s=10)
    assert resources.recorder.stats.written == 500
    assert await db.fetchval("select count(*) from skill_activations") == 500
