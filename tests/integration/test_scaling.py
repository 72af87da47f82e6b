"""Scaling a live fleet: workers added and drained (SIGTERM) mid-load lose nothing and answer
nothing twice or out of order (real `skillet worker` processes, the soak scenario's checks)."""

from __future__ import annotations

import asyncpg
import pytest

from tests.soak.run import SoakPlan, run_soak
from worker.settings import Settings


@pytest.mark.timeout(300)
async def test_adding_and_draining_workers_mid_load_loses_and_repeats_nothing(
    settings: Settings, db: asyncpg.Connection
) -> None:
    plan = SoakPlan(
        messages=300,
        conversations=30,
        workers=2,
        duplicate_share=0.10,
        kill_one_worker=False,
        add_workers=2,
        drain_workers=1,
        # Load lasts several seconds (a round of 30 messages every 0.5 s, 200 ms turns): the
        # added workers start while it runs and the drained one has turns in flight.
        model_latency_ms=200,
        round_gap_s=0.5,
        takeover_share=0.0,  # workers coming and going only (test_soak_small has the person)
    )
    report = await run_soak(settings, plan)
    assert [e.split(" at ")[0] for e in report.events] == [
        "added 2 worker(s)",
        "SIGTERM 1 worker(s)",
        "drained worker exited 0",  # a clean drain: its running turns finished first
    ], report.events
    assert (report.lost, report.duplicate_replies, report.out_of_order) == (0, 0, 0)
    assert report.sent >= plan.conversations
