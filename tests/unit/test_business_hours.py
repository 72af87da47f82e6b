"""The schedule parser and the next opening, on fixed dates (hours.schedule, hours.opening)."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hours.errors import ClosedDatesInvalid, HoursError, TimezoneUnknown
from hours.opening import AfterHours, BusinessHours, is_open, next_opening, opening_phrase
from hours.schedule import (
    DayRange,
    load_zone,
    parse_closed_dates,
    parse_schedule,
    render_schedule,
)
from hours.texts import closed_now

SP = ZoneInfo("America/Sao_Paulo")  # no DST since 2019
NY = ZoneInfo("America/New_York")  # DST: 2026-03-08 02:00 -> 03:00, 2026-11-01 02:00 -> 01:00


def _hours(text: str, zone: ZoneInfo = SP, closed: tuple[str, ...] = ()) -> BusinessHours:
    return BusinessHours(
        parse_schedule(text), zone, frozenset(date.fromisoformat(d) for d in closed)
    )


def _at(text: str, zone: ZoneInfo = SP) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=zone)


# --- parsing --------------------------------------------------------------------------------


def test_the_issue_example_parses_and_renders_back() -> None:
    schedule = parse_schedule("seg-sex 09:00-18:00; sab 09:00-13:00")
    assert len(schedule.ranges) == 6
    assert schedule.of_day(5) == (DayRange(5, 540, 780),)
    assert schedule.of_day(6) == ()
    assert render_schedule(schedule) == "seg-sex 09:00-18:00; sab 09:00-13:00"
    assert parse_schedule(render_schedule(schedule)) == schedule


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("Sáb 9:00-12:00", [5]),
        ("SEG,qua,sex 08:00-12:00", [0, 2, 4]),
        ("sex-seg 10:00-14:00", [4, 5, 6, 0]),  # wraps the week
        ("dom 00:00-24:00", [6]),
    ],
)
def test_days_as_people_write_them(text: str, days: list[int]) -> None:
    assert sorted({r.weekday for r in parse_schedule(text).ranges}) == sorted(days)


def test_several_ranges_a_day_and_a_range_past_midnight() -> None:
    schedule = parse_schedule("seg 08:00-12:00, 14:00-18:00\nsex 22:00-02:00")
    assert schedule.of_day(0) == (DayRange(0, 480, 720), DayRange(0, 840, 1080))
    assert schedule.of_day(4) == (DayRange(4, 1320, 1560),)
    assert render_schedule(schedule) == "seg 08:00-12:00, 14:00-18:00; sex 22:00-02:00"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "vazio"),
        ("  ;  ", "vazio"),
        ("seg-sex", "dias e das horas"),
        ("segunda 09:00-18:00", "dia desconhecido"),
        ("seg 9-18", "HH:MM"),
        ("seg 09:00", "início e fim"),
        ("seg 25:00-26:00", "não existe"),
        ("seg 09:60-10:00", "não existe"),
        ("seg 24:00-02:00", "não existe"),
        ("seg 09:00-09:00", "mesma hora"),
        ("seg,seg 09:00-10:00", "duas vezes"),
        ("seg 09:00-12:00, 11:00-13:00", "sobrepõem"),
        ("sex 22:00-02:00; sab 01:00-05:00", "sobrepõem"),
        ("dom 22:00-02:00; seg 01:00-05:00", "sobrepõem"),  # Sunday night into Monday
    ],
)
def test_an_unparseable_schedule_says_what_to_fix(text: str, says: str) -> None:
    with pytest.raises(HoursError) as refused:
        parse_schedule(text)
    assert refused.value.code == "business_hours_invalid"
    assert says in refused.value.message


def test_hostile_schedules_are_refused_quickly_and_quoted_short() -> None:
    started = time.process_time()
    for text in (
        "seg " + "09:00-10:00 " * 10_000,
        "a" * 1_000_000,
        "seg-" * 100,
        "seg " + "9" * 400 + ":00-10:00",
        "seg\x00 09:00-10:00",
        ";".join(f"seg 0{i}:00-0{i}:30" for i in range(10)) * 6,
    ):
        with pytest.raises(HoursError) as refused:
            parse_schedule(text)
        assert len(refused.value.message) < 200
    # Not a timing assertion on behaviour: a guard that the bounds cut the work at all.
    assert time.process_time() - started < 5


def test_closed_dates() -> None:
    assert parse_closed_dates("2027-01-01, 2026-12-25,2026-12-25") == (
        date(2026, 12, 25),
        date(2027, 1, 1),
    )
    assert parse_closed_dates("") == ()
    for bad in ("25/12/2026", "2026-02-30", "2026-12-25;2027-01-01", "2026-1-1"):
        with pytest.raises(ClosedDatesInvalid, match="AAAA-MM-DD"):
            parse_closed_dates(bad)
    with pytest.raises(ClosedDatesInvalid, match="200"):
        parse_closed_dates(",".join(["2026-12-25"] * 300))


def test_time_zones() -> None:
    assert load_zone(" America/Sao_Paulo ").key == "America/Sao_Paulo"
    for bad in ("America/Sao Paulo", "Marte/Olympus", "../etc/passwd", "/etc/localtime", "x" * 500):
        with pytest.raises(TimezoneUnknown, match="America/Sao_Paulo"):
            load_zone(bad)


# --- open or closed, and the next opening ---------------------------------------------------

WEEK = "seg-sex 09:00-18:00; sab 09:00-13:00"


@pytest.mark.parametrize(
    ("at", "opened", "opening", "phrase"),
    [
        # 2026-12-01 is a Tuesday.
        ("2026-12-01 10:00", True, None, None),
        ("2026-12-01 08:59", False, "2026-12-01 09:00", "hoje às 09:00"),
        ("2026-12-01 18:00", False, "2026-12-02 09:00", "amanhã às 09:00"),
        ("2026-12-05 13:30", False, "2026-12-07 09:00", "segunda-feira às 09:00"),
        ("2026-12-06 12:00", False, "2026-12-07 09:00", "amanhã às 09:00"),
    ],
)
def test_a_week_in_sao_paulo(
    at: str, opened: bool, opening: str | None, phrase: str | None
) -> None:
    hours = _hours(WEEK)
    assert is_open(hours, _at(at)) is opened
    if opening is not None:
        found = next_opening(hours, _at(at))
        assert found == _at(opening).astimezone(UTC)
        assert opening_phrase(found, _at(at), SP) == phrase


def test_closed_days_skip_their_openings() -> None:
    hours = _hours(WEEK, closed=("2026-12-24", "2026-12-25", "2026-12-26"))
    at = _at("2026-12-23 19:00")  # Wednesday evening
    assert not is_open(hours, _at("2026-12-24 10:00"))
    found = next_opening(hours, at)
    assert found == _at("2026-12-28 09:00").astimezone(UTC)
    assert opening_phrase(found, at, SP) == "segunda-feira às 09:00"
    far = _hours("seg 09:00-10:00", closed=tuple(f"2027-01-{d:02d}" for d in (4, 11, 18, 25)))
    new_year = _at("2027-01-01 12:00")
    assert opening_phrase(next_opening(far, new_year), new_year, SP) == "em 01/02 às 09:00"


def test_a_range_past_midnight_belongs_to_its_first_day() -> None:
    hours = _hours("sex 22:00-02:00", closed=("2026-12-05",))
    assert is_open(hours, _at("2026-12-04 23:00"))  # Friday night
    assert is_open(hours, _at("2026-12-05 01:59"))  # Saturday, closed day: Friday's range runs
    assert not is_open(hours, _at("2026-12-05 02:00"))
    assert next_opening(hours, _at("2026-12-05 03:00")) == _at("2026-12-11 22:00").astimezone(UTC)
    closed_friday = _hours("sex 22:00-02:00", closed=("2026-12-04",))
    assert not is_open(closed_friday, _at("2026-12-05 01:00"))


def test_dst_in_new_york() -> None:
    hours = _hours("dom 01:00-04:00; seg-sex 09:00-17:00", zone=NY)
    # 2026-03-08 (Sunday): 02:00 jumps to 03:00, so the range is two hours long.
    assert is_open(hours, datetime(2026, 3, 8, 6, 30, tzinfo=UTC))  # 01:30 EST
    assert is_open(hours, datetime(2026, 3, 8, 7, 30, tzinfo=UTC))  # 03:30 EDT
    assert not is_open(hours, datetime(2026, 3, 8, 8, 0, tzinfo=UTC))  # 04:00 EDT
    # Monday opens at 09:00 EDT, 13:00 UTC (14:00 UTC the week before).
    assert next_opening(hours, datetime(2026, 3, 8, 8, 0, tzinfo=UTC)) == datetime(
        2026, 3, 9, 13, 0, tzinfo=UTC
    )
    assert next_opening(hours, datetime(2026, 3, 2, 0, 0, tzinfo=UTC)) == datetime(
        2026, 3, 2, 14, 0, tzinfo=UTC
    )
    # 2026-11-01 (Sunday): 02:00 goes back to 01:00, so 01:00-04:00 lasts four hours.
    assert is_open(hours, datetime(2026, 11, 1, 5, 0, tzinfo=UTC))  # 01:00 EDT
    assert is_open(hours, datetime(2026, 11, 1, 8, 30, tzinfo=UTC))  # 03:30 EST
    assert not is_open(hours, datetime(2026, 11, 1, 9, 0, tzinfo=UTC))  # 04:00 EST


def test_an_opening_at_a_time_that_does_not_exist_opens_after_the_jump() -> None:
    hours = _hours("dom 02:30-05:00", zone=NY)
    found = next_opening(hours, datetime(2026, 3, 8, 0, 0, tzinfo=UTC))
    assert found == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)  # 03:30 EDT
    assert opening_phrase(found, datetime(2026, 3, 8, 0, 0, tzinfo=UTC), NY) == "amanhã às 03:30"


def test_closed_now_names_the_period_by_its_opening() -> None:
    hours = BusinessHours(parse_schedule(WEEK), SP, after_hours=AfterHours.AWAY)
    evening, night = (
        closed_now(hours, _at("2026-12-01 19:00")),
        closed_now(hours, _at("2026-12-02 02:00")),
    )
    assert evening is not None and night is not None
    assert evening.opening == night.opening and evening.away
    assert evening.when == "amanhã às 09:00" and night.when == "hoje às 09:00"
    assert closed_now(hours, _at("2026-12-02 09:00")) is None
    assert closed_now(None, _at("2026-12-02 02:00")) is None


# --- properties -----------------------------------------------------------------------------

_PIECES = st.sampled_from(
    ["seg", "sex", "Sáb", "dom", "-", ",", ";", " ", "\n", "09:00", "24:00", "22:00", "7:5", ":"]
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(_PIECES, max_size=30).map("".join)))
def test_any_text_parses_or_is_refused_with_our_error(text: str) -> None:
    try:
        schedule = parse_schedule(text)
    except HoursError as refused:
        assert refused.code == "business_hours_invalid" and len(refused.message) < 200
        return
    assert parse_schedule(render_schedule(schedule)) == schedule


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1)))
def test_the_next_opening_is_open_and_nothing_before_it_is(at: datetime) -> None:
    hours = _hours("seg-sex 09:00-18:00; sab 09:00-13:00; dom 22:00-02:00", zone=NY)
    now = at.replace(tzinfo=UTC)
    if is_open(hours, now):
        return
    opening = next_opening(hours, now)
    assert opening is not None and opening > now
    assert is_open(hours, opening)
    assert not is_open(hours, opening - timedelta(minutes=1))
