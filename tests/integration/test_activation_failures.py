"""Activation telemetry never breaks a turn, even when every insert fails."""

from __future__ import annotations

import asyncpg

from tests.integration.support import create_org, enqueue, payload, publish, run_burst
from turn.queries import ActivationRow
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
        worker = await run_burst(settings)
    finally:
        await db.execute(RESTORE)
    assert worker.jobs_complete == 3 and worker.jobs_failed == 0
    sent = await db.fetchval(
        "select count(*) from outbox where organization_id = $1 and status = 'sent'", org
    )
    assert sent == 3
    assert await db.fetchval("select count(*) from skill_activations") == 0


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
