"""Whether an org is open at an instant, when it next opens, and how to say it in pt-BR (pure:
values in, values out; `at` is a timezone-aware instant, never read from a clock here).

A range's start and end are wall-clock times of the org's zone on the day the range starts,
turned into instants by zoneinfo: on a day whose clock jumps forward, a time that does not exist
reads with the offset before the jump (00:30 on a day that skips from 00:00 to 01:00 is 01:30);
on a day whose clock goes back, a time that happens twice is its first. Instants are compared
in UTC (aware datetimes of one zone would compare by wall clock).

A closed day cancels the ranges that start on it (one that starts the evening before and
passes midnight into it still runs). The current closed period is named by its end, the next
opening: an away message is sent once per conversation per such name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from hours.schedule import MAX_CLOSED_DATES, DayRange, WeeklySchedule

# Days searched for the next opening: every week has a range (a schedule has at least one),
# so at most one week per closed day, and one more, can pass without an opening.
SEARCH_DAYS = 7 * (MAX_CLOSED_DATES + 2)

WEEKDAY_NAMES = (
    "segunda-feira",
    "terça-feira",
    "quarta-feira",
    "quinta-feira",
    "sexta-feira",
    "sábado",
    "domingo",
)


class AfterHours(StrEnum):
    """What the agent does while the org is closed."""

    ANSWER = "answer"  # it answers as always (default)
    AWAY = "away"  # one away message per conversation per closed period, then silence


@dataclass(frozen=True)
class BusinessHours:
    schedule: WeeklySchedule
    zone: ZoneInfo
    closed: frozenset[date] = frozenset()
    after_hours: AfterHours = AfterHours.ANSWER


def _instant(day: date, minutes: int, zone: ZoneInfo) -> datetime:
    wall = datetime.combine(day, time(0)) + timedelta(minutes=minutes)
    return wall.replace(tzinfo=zone).astimezone(UTC)


def _spans(hours: BusinessHours, day: date) -> list[tuple[datetime, datetime]]:
    """The openings that start on `day` (local), as UTC instants."""
    if day in hours.closed:
        return []
    ranges: tuple[DayRange, ...] = hours.schedule.of_day(day.weekday())
    return [
        (_instant(day, r.start_min, hours.zone), _instant(day, r.end_min, hours.zone))
        for r in ranges
    ]


def is_open(hours: BusinessHours, at: datetime) -> bool:
    """Whether `at` falls in one of the org's openings."""
    now = at.astimezone(UTC)
    today = at.astimezone(hours.zone).date()
    for day in (today - timedelta(days=1), today):  # yesterday's may pass midnight
        if any(start <= now < end for start, end in _spans(hours, day)):
            return True
    return False


def next_opening(hours: BusinessHours, at: datetime) -> datetime | None:
    """The first opening that starts after `at` (UTC), or None within SEARCH_DAYS."""
    now = at.astimezone(UTC)
    today = at.astimezone(hours.zone).date()
    for offset in range(SEARCH_DAYS):
        starts = [start for start, _ in _spans(hours, today + timedelta(days=offset))]
        later = [s for s in starts if s > now]
        if later:
            return min(later)
    return None


def opening_phrase(opening: datetime | None, at: datetime, zone: ZoneInfo) -> str:
    """When `opening` is, said from `at` in pt-BR: "hoje às 14:00", "amanhã às 09:00",
    "segunda-feira às 09:00" (within a week), else "em 02/01 às 09:00"."""
    if opening is None:
        return "assim que a equipe voltar"
    local = opening.astimezone(zone)
    days = (local.date() - at.astimezone(zone).date()).days
    clock = f"às {local:%H:%M}"
    if days <= 0:
        return f"hoje {clock}"
    if days == 1:
        return f"amanhã {clock}"
    if days < 7:
        return f"{WEEKDAY_NAMES[local.weekday()]} {clock}"
    return f"em {local:%d/%m} {clock}"
