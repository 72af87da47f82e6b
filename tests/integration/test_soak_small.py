"""The soak scenario at small size: 4 worker processes, duplicates, one SIGKILL."""

from __future__ import annotations

import asyncpg
import pytest

from tests.soak.run import SoakPlan, run_soak
from worker.settings import Settings


@pytest.mark.timeout(300)
async def test_small_soak_loses_nothing_and_answers_once_in_order(
    settings: Settings, db: asyncpg.Connection
) -> None:
    plan = SoakPlan(
        messages=400,
        conversations=40,
        workers=4,
        duplicate_share=0.10,
        kill_one_worker=True,
        restart_postgres=None,  # the suite's own connections share that server
        model_latency_ms=20,
        round_gap_s=0.1,
    )
    report = await run_soak(settings, plan)
    assert report.events and report.events[0].startswith("SIGKILL")
    assert (report.lost, report.duplicate_replies, report.out_of_order) == (0, 0, 0)
    assert report.photo_only_replies == 0
    assert report.sent >= plan.conversations
