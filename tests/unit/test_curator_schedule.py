"""The sleep-cycle schedule as a pure function of (now, last run, last activity)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from skills.curator.schedule import RunTrigger, SchedulePolicy, due_trigger
from worker.crons import cron_fields
from worker.settings import Settings

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
POLICY = SchedulePolicy(idle_s=300, floor_s=3600, every_s=21_600)
NO_CEILING = SchedulePolicy(idle_s=300, floor_s=3600, every_s=0)
IDLE, CEILING = RunTrigger.IDLE, RunTrigger.CEILING


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("policy", "last_run_at", "last_activity_at", "expected"),
    [
        # never run: the ceiling makes it due at once; idle wins when it also applies
        (POLICY, None, None, CEILING),
        (POLICY, None, ago(600), IDLE),
        (POLICY, None, ago(60), CEILING),
        # idle: quiet >= idle_s, activity since the last run, floor passed
        (POLICY, ago(7200), ago(300), IDLE),
        (POLICY, ago(7200), ago(299), None),  # still busy
        (POLICY, ago(3600), ago(600), IDLE),  # floor is inclusive
        (POLICY, ago(3599), ago(600), None),  # floor not yet passed
        (POLICY, ago(7200), ago(7300), None),  # no activity since the last run
        (POLICY, ago(7200), ago(7200), None),  # activity exactly at the last run: not new
        # ceiling: every_s since the last run, busy or quiet
        (POLICY, ago(21_600), ago(1), CEILING),
        (POLICY, ago(21_599), ago(1), None),
        (POLICY, ago(21_600), None, CEILING),
        (POLICY, ago(30_000), ago(31_000), CEILING),  # quiet, but nothing new since the run
        # ceiling disabled: idle is the only trigger
        (NO_CEILING, None, None, None),
        (NO_CEILING, ago(999_999), ago(1_000_500), None),
        (NO_CEILING, ago(999_999), ago(600), IDLE),
        (NO_CEILING, None, ago(600), IDLE),
        # a last run in the future (a worker clock behind another's): nothing is due
        (POLICY, NOW + timedelta(seconds=5), ago(600), None),
    ],
)
def test_due_trigger(
    policy: SchedulePolicy,
    last_run_at: datetime | None,
    last_activity_at: datetime | None,
    expected: RunTrigger | None,
) -> None:
    assert due_trigger(NOW, last_run_at, last_activity_at, policy) == expected


def test_one_quiet_period_yields_one_idle_run() -> None:
    """Tick every minute after a burst of activity: exactly one idle run, then nothing."""
    last_activity = NOW
    last_run: datetime | None = NOW - timedelta(hours=2)
    runs = []
    for minute in range(1, 120):
        now = NOW + timedelta(minutes=minute)
        trigger = due_trigger(now, last_run, last_activity, POLICY)
        if trigger is not None:
            runs.append((minute, trigger))
            last_run = now
    assert runs == [(5, IDLE)]


def test_a_busy_org_still_runs_at_the_ceiling() -> None:
    """Activity every minute for 13 hours: never idle, two ceiling runs."""
    last_run: datetime | None = NOW
    runs = []
    for minute in range(1, 13 * 60):
        now = NOW + timedelta(minutes=minute)
        trigger = due_trigger(now, last_run, now, POLICY)
        if trigger is not None:
            runs.append((minute, trigger))
            last_run = now
    assert runs == [(360, CEILING), (720, CEILING)]


def test_negative_durations_are_refused() -> None:
    with pytest.raises(ValueError):
        SchedulePolicy(idle_s=-1)


@pytest.mark.parametrize(
    ("every_s", "second", "minute"),
    [
        (60, {0}, None),
        (1, set(range(60)), None),
        (15, {0, 15, 30, 45}, None),
        (300, {0}, {0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55}),
        (3600, {0}, {0}),
    ],
)
def test_cron_fields(every_s: int, second: set[int], minute: set[int] | None) -> None:
    assert cron_fields(every_s) == (second, minute)


@pytest.mark.parametrize("every_s", [7, 45, 90, 420])
def test_a_check_interval_cron_cannot_express_is_refused(every_s: int) -> None:
    with pytest.raises(ValueError):
        cron_fields(every_s)
    with pytest.raises(ValidationError):
        Settings(curator_check_every_s=every_s)


def test_archive_before_stale_is_refused_by_settings() -> None:
    with pytest.raises(ValidationError):
        Settings(curator_stale_after_days=60, curator_archive_after_days=30)
