"""Parse an org's weekly schedule, closed days and time zone (pure: text in, values out).

The schedule reads as a person writes it: "seg-sex 09:00-18:00; sab 09:00-13:00".

- Segments are separated by ``;`` (or a new line). A segment is its days, a space, then one
  or more time ranges separated by ``,`` or spaces: "seg,qua 08:00-12:00 14:00-18:00".
- Days are the pt-BR abbreviations dom seg ter qua qui sex sab (case and accents ignored:
  "Sáb" is sab), alone, in a list ("seg,qua,sex") or as a range ("seg-sex"; a range may wrap
  the week: "sex-seg" is sex, sab, dom, seg).
- A time range is HH:MM-HH:MM (H:MM too; the end may be 24:00). An end before its start passes
  midnight: "sex 22:00-02:00" opens Friday at 22:00 and closes Saturday at 02:00. A range
  belongs to the day it starts on. An empty range (start = end) is refused.
- Ranges of one day may not overlap, counting one that passes midnight into the next day.

Bounds (hostile input): the text is refused past MAX_SCHEDULE_CHARS before anything is split,
and past MAX_RANGES ranges; every token is matched by a fixed-shape pattern on at most a few
characters, so the work is linear in the text. Errors quote at most QUOTE_CHARS of the piece.

Closed days: "2026-12-25,2027-01-01" (ISO dates, at most MAX_CLOSED_DATES). A closed day
cancels the ranges that start on it. The time zone is an IANA name (zoneinfo, with the tzdata
package as its fallback database).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hours.errors import ClosedDatesInvalid, HoursError, TimezoneUnknown

MAX_SCHEDULE_CHARS = 500  # a week of several ranges a day is well under 200
MAX_RANGES = 50  # seven days of seven ranges, and one
MAX_CLOSED_DATES = 200  # a few years of holidays
MAX_CLOSED_CHARS = MAX_CLOSED_DATES * 11  # "YYYY-MM-DD,"
MAX_ZONE_CHARS = 64  # the longest IANA name is about 30
QUOTE_CHARS = 40
MINUTES_PER_DAY = 1440

# Monday first, as date.weekday() counts.
DAY_NAMES = ("seg", "ter", "qua", "qui", "sex", "sab", "dom")
_DAY_INDEX = {name: i for i, name in enumerate(DAY_NAMES)}
_TIME_RE = re.compile(r"([0-9]{1,2}):([0-9]{2})")
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ZONE_RE = re.compile(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+){0,3}")
_SEGMENT_SPLIT = re.compile(r"[;\n]")
_RANGE_SPLIT = re.compile(r"[,\s]+")

EXAMPLE = '"seg-sex 09:00-18:00; sab 09:00-13:00"'


@dataclass(frozen=True, order=True)
class DayRange:
    """One opening: `weekday` (0 = Monday) from `start_min` to `end_min` minutes after that
    day's midnight; `end_min` > 1440 when it passes midnight."""

    weekday: int
    start_min: int
    end_min: int


@dataclass(frozen=True)
class WeeklySchedule:
    ranges: tuple[DayRange, ...]  # sorted by day, then start

    def of_day(self, weekday: int) -> tuple[DayRange, ...]:
        return tuple(r for r in self.ranges if r.weekday == weekday)


def _quote(piece: str) -> str:
    piece = piece.strip()
    return f'"{piece[:QUOTE_CHARS]}…"' if len(piece) > QUOTE_CHARS else f'"{piece}"'


def _plain(text: str) -> str:
    """Casefolded, accents dropped ("Sáb" -> "sab")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _day(name: str) -> int:
    index = _DAY_INDEX.get(_plain(name))
    if index is None:
        raise HoursError(
            f"dia desconhecido {_quote(name)}: use dom, seg, ter, qua, qui, sex ou sab "
            f"(ex.: {EXAMPLE})"
        )
    return index


def _days(spec: str) -> list[int]:
    days: list[int] = []
    for item in spec.split(","):
        first, sep, last = item.partition("-")
        if not sep:
            days.append(_day(first))
            continue
        start, end = _day(first), _day(last)
        days += [(start + i) % 7 for i in range((end - start) % 7 + 1)]
    if len(set(days)) != len(days):
        raise HoursError(f"um dia aparece duas vezes em {_quote(spec)}")
    return days


def _minutes(text: str, *, end: bool) -> int:
    match = _TIME_RE.fullmatch(text) if len(text) <= 5 else None
    if match is None:
        raise HoursError(f"horário {_quote(text)} não é HH:MM (ex.: 09:00)")
    hours, minutes = int(match.group(1)), int(match.group(2))
    value = hours * 60 + minutes
    if minutes > 59 or value > MINUTES_PER_DAY or (value == MINUTES_PER_DAY and not end):
        raise HoursError(
            f"horário {_quote(text)} não existe: vai de 00:00 a 23:59 (ou 24:00 no fim)"
        )
    return value


def _range(text: str) -> tuple[int, int]:
    start_text, sep, end_text = text.partition("-")
    if not sep:
        raise HoursError(f"faixa {_quote(text)} precisa de início e fim (ex.: 09:00-18:00)")
    start, end = _minutes(start_text, end=False), _minutes(end_text, end=True)
    if start == end:
        raise HoursError(f"faixa {_quote(text)} começa e termina na mesma hora")
    if end < start:  # passes midnight: closes on the next day
        end += MINUTES_PER_DAY
    return start, end


def _segment(text: str) -> list[DayRange]:
    days_text, _, ranges_text = text.strip().partition(" ")
    pieces = [p for p in _RANGE_SPLIT.split(ranges_text) if p]
    if not pieces:
        raise HoursError(f"trecho {_quote(text)} precisa dos dias e das horas (ex.: {EXAMPLE})")
    days = _days(days_text)  # first, as it is written first
    spans = [_range(p) for p in pieces]
    return [DayRange(day, start, end) for day in days for start, end in spans]


def _check_overlaps(ranges: list[DayRange]) -> None:
    # On the week's clock (minutes since Monday 00:00); Sunday night wraps into Monday.
    week = 7 * MINUTES_PER_DAY
    spans = sorted((r.weekday * MINUTES_PER_DAY + r.start_min, r) for r in ranges)
    pairs = list(itertools.pairwise(spans))
    if len(spans) > 1:
        (last_start, last), (first_start, first) = spans[-1], spans[0]
        pairs.append(((last_start, last), (first_start + week, first)))
    for (start, r), (next_start, nxt) in pairs:
        if start + r.end_min - r.start_min > next_start:
            raise HoursError(
                f"as faixas de {DAY_NAMES[r.weekday]} e {DAY_NAMES[nxt.weekday]} se sobrepõem: "
                "junte-as numa faixa só"
            )


def parse_schedule(text: str) -> WeeklySchedule:
    """The schedule `text` describes, or HoursError saying what to fix (rules above)."""
    if len(text) > MAX_SCHEDULE_CHARS:
        raise HoursError(f"o horário tem mais de {MAX_SCHEDULE_CHARS} caracteres")
    if "\x00" in text:
        raise HoursError("o horário tem um caractere inválido (NUL)")
    ranges: list[DayRange] = []
    for segment in _SEGMENT_SPLIT.split(text):
        if segment.strip():
            ranges += _segment(segment)
        if len(ranges) > MAX_RANGES:
            raise HoursError(f"o horário tem mais de {MAX_RANGES} faixas")
    if not ranges:
        raise HoursError(f"o horário está vazio: escreva dias e horas (ex.: {EXAMPLE})")
    _check_overlaps(ranges)
    return WeeklySchedule(tuple(sorted(ranges)))


def _hhmm(minutes: int) -> str:
    minutes %= MINUTES_PER_DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def render_schedule(schedule: WeeklySchedule) -> str:
    """The canonical text (parse_schedule reads it back as the same schedule): days with the
    same ranges joined ("seg-sex" for a run, "seg,qua" otherwise)."""
    by_spans: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for day in range(7):
        spans = tuple((r.start_min, r.end_min) for r in schedule.of_day(day))
        if spans:
            by_spans.setdefault(spans, []).append(day)
    segments = []
    for spans, days in by_spans.items():
        times = ", ".join(
            f"{_hhmm(s)}-{'24:00' if e == MINUTES_PER_DAY else _hhmm(e)}" for s, e in spans
        )
        segments.append(f"{_render_days(days)} {times}")
    return "; ".join(segments)


def _render_days(days: list[int]) -> str:
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{DAY_NAMES[days[0]]}-{DAY_NAMES[days[-1]]}"
    return ",".join(DAY_NAMES[d] for d in days)


def parse_closed_dates(text: str) -> tuple[date, ...]:
    """Closed days from "YYYY-MM-DD,YYYY-MM-DD" (spaces allowed; "" is none), sorted, once."""
    if len(text) > MAX_CLOSED_CHARS:
        raise ClosedDatesInvalid(f"a lista de dias fechados passa de {MAX_CLOSED_DATES} datas")
    found: set[date] = set()
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        try:
            if _DATE_RE.fullmatch(item) is None:
                raise ValueError(item)
            found.add(date.fromisoformat(item))
        except ValueError:
            raise ClosedDatesInvalid(
                f"data {_quote(item)} inválida: use AAAA-MM-DD separadas por vírgula "
                "(ex.: 2026-12-25,2027-01-01)"
            ) from None
    if len(found) > MAX_CLOSED_DATES:
        raise ClosedDatesInvalid(f"a lista de dias fechados passa de {MAX_CLOSED_DATES} datas")
    return tuple(sorted(found))


def load_zone(name: str) -> ZoneInfo:
    """The IANA time zone `name` (e.g. America/Sao_Paulo), or TimezoneUnknown."""
    key = name.strip()
    if len(key) <= MAX_ZONE_CHARS and _ZONE_RE.fullmatch(key) is not None:
        try:
            return ZoneInfo(key)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    raise TimezoneUnknown(
        f"fuso horário desconhecido {_quote(name)}: use um nome IANA, como America/Sao_Paulo, "
        "America/Manaus ou America/Noronha"
    )
