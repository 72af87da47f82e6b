"""When the curator runs (the sleep cycle), pure: idle and ceiling triggers from three datetimes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum


class RunTrigger(StrEnum):
    MANUAL = "manual"  # `skillet curator run`
    IDLE = "idle"  # the org went quiet after activity
    CEILING = "ceiling"  # too long since the last run, busy or not


@dataclass(frozen=True)
class SchedulePolicy:
    """idle_s: quiet time that counts as rest; floor_s: minimum spacing of idle runs;
    every_s: the ceiling between runs whatever the activity (0 disables it)."""

    idle_s: int = 300
    floor_s: int = 3600
    every_s: int = 21_600

    def __post_init__(self) -> None:
        if self.idle_s < 0 or self.floor_s < 0 or self.every_s < 0:
            raise ValueError("schedule durations must be >= 0 seconds")


def due_trigger(
    now: datetime,
    last_run_at: datetime | None,
    last_activity_at: datetime | None,
    policy: SchedulePolicy,
) -> RunTrigger | None:
    """Which trigger (if any) makes an org's curator pass due at `now`.

    Idle: there was activity since the last run (or there never was a run), the org has
    been quiet for `idle_s`, and `floor_s` has passed since the last run; so one quiet period
    yields one run, and a chat that pauses every few minutes does not run it every few
    minutes. Ceiling: `every_s` since the last run (a never-run org is due at once), so time
    alone still ages skills of an org that never rests. Idle wins when both apply.
    """
    since_run = None if last_run_at is None else now - last_run_at
    if last_activity_at is not None:
        rested = now - last_activity_at >= timedelta(seconds=policy.idle_s)
        new_activity = last_run_at is None or last_activity_at > last_run_at
        past_floor = since_run is None or since_run >= timedelta(seconds=policy.floor_s)
        if rested and new_activity and past_floor:
            return RunTrigger.IDLE
    if policy.every_s > 0 and (since_run is None or since_run >= timedelta(seconds=policy.every_s)):
        return RunTrigger.CEILING
    return None
