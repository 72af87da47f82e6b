"""Unit tests of api.console.moments: every time the console shows, in the org's zone, said
as a person scanning reads it; the same instant reads differently in another zone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from api.console.moments import Clock

SAO_PAULO = ZoneInfo("America/Sao_Paulo")
# 3 Dec 2026, 15:00 in São Paulo (UTC-3, no daylight saving time since 2019).
NOW = datetime(2026, 12, 3, 18, 0, tzinfo=UTC)
CLOCK = Clock(NOW, SAO_PAULO)


@pytest.mark.parametrize(
    ("at", "text"),
    [
        (NOW - timedelta(seconds=20), "agora há pouco"),
        (NOW - timedelta(minutes=3), "há 3 min"),
        (NOW - timedelta(minutes=59), "há 59 min"),
        (NOW - timedelta(hours=2, minutes=55), "hoje às 12:05"),
        # 02:30 UTC on the 3rd is still the 2nd in São Paulo: "ontem", not "hoje".
        (datetime(2026, 12, 3, 2, 30, tzinfo=UTC), "ontem às 23:30"),
        (datetime(2026, 12, 4, 12, 0, tzinfo=UTC), "amanhã às 09:00"),
        (datetime(2026, 11, 28, 12, 30, tzinfo=UTC), "28/11 às 09:30"),
        (datetime(2025, 11, 28, 12, 30, tzinfo=UTC), "28/11/2025 às 09:30"),
    ],
)
def test_a_time_reads_relative_when_recent_and_by_the_orgs_day_otherwise(
    at: datetime, text: str
) -> None:
    assert CLOCK.moment(at) == text
    assert CLOCK.moment(at.isoformat()) == text  # the API's ISO text reads the same


def test_nothing_reads_as_a_dash_and_a_naive_time_is_utc() -> None:
    assert CLOCK.moment(None) == CLOCK.moment("") == "—"
    assert CLOCK.moment("2026-12-03T15:05:00") == "hoje às 12:05"


def test_the_same_instant_in_another_zone_and_the_clocks_own_time() -> None:
    manaus = Clock(NOW, ZoneInfo("America/Manaus"))
    at = NOW - timedelta(hours=3)
    assert (CLOCK.moment(at), manaus.moment(at)) == ("hoje às 12:00", "hoje às 11:00")
    assert (CLOCK.time_of_day(), manaus.time_of_day()) == ("15:00:00", "14:00:00")
