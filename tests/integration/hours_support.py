"""A closed day for business-hours tests that stays closed for the whole test, whatever the
hour it runs at (CI runs just after UTC midnight, in the evening of America/Sao_Paulo)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

NOON_H = 12


def noon_zone(now: datetime) -> str:
    """A fixed-offset IANA zone (no daylight saving) where `now` is between 12:00 and 13:00."""
    offset_h = NOON_H - now.astimezone(UTC).hour  # -11 .. +12: every one is an Etc zone
    return f"Etc/GMT{-offset_h:+d}"  # POSIX sign: Etc/GMT-3 is three hours ahead of UTC


def closed_today(now: datetime) -> tuple[str, str]:
    """(zone, that zone's date at `now`, YYYY-MM-DD): with this date closed and the rest of the
    week open all day, the org is closed from `now` for at least 11 hours and opens "amanhã às
    00:00". A date taken in UTC instead becomes yesterday when a test runs across midnight,
    and the turn finds the org open."""
    zone = noon_zone(now)
    return zone, now.astimezone(ZoneInfo(zone)).date().isoformat()
