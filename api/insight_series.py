"""The Painel's series from its rollup rows (pure: rows, the period, prices and hours in; the
JSON the API answers out).

One value per day of the period, in order, for every series; a day with nothing counts 0, and a
time or a share with nothing to measure is null (never 0, which would read as "instant" or
"none after hours"). Reply times come from histograms (bucket b holds (1.25^(b-1), 1.25^b]
seconds; bucket 0 up to 1 s): a percentile is found in its bucket and placed by linear
interpolation inside it, so it reads to about 12% of the true value. A customer message is
after hours when the middle of its quarter hour is closed by the org's business hours as they
are now (no schedule: always open, so no message is after hours).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from api.insight_queries import (
    ConversationDay,
    HandoffCount,
    QuarterCount,
    ReplyBucket,
    SkillCount,
    TokenDay,
)
from api.model_prices import ModelPrices
from hours.opening import BusinessHours, is_open

BUCKET_BASE = 1.25
MAX_BUCKET = 63
QUARTER_MINUTES = 15
CAUSES = ("customer", "tool", "console", "phone")
# Series whose days are UTC (their rollups are written by UTC day): the page says so.
UTC_SERIES = ("tokens_input", "tokens_cached_input", "tokens_output", "cost_brl")


def bucket_of(seconds: float) -> int:
    """The histogram bucket of a reply time (skillet_insight_bucket is its SQL twin)."""
    return min(MAX_BUCKET, max(0, math.ceil(math.log(max(seconds, 1.0)) / math.log(BUCKET_BASE))))


def _bounds(bucket: int) -> tuple[float, float]:
    if bucket == 0:
        return 0.0, 1.0
    low = BUCKET_BASE ** (bucket - 1)
    return low, (low if bucket == MAX_BUCKET else BUCKET_BASE**bucket)


def percentile(histogram: Mapping[int, int], q: float) -> float | None:
    """The q-quantile (0 < q < 1) of the seconds a histogram holds, to 0.1 s; None if empty."""
    total = sum(histogram.values())
    if total <= 0:
        return None
    rank = q * total
    seen = 0
    for bucket in sorted(histogram):
        count = histogram[bucket]
        if count <= 0:
            continue
        if seen + count >= rank:
            low, high = _bounds(bucket)
            return round(low + (high - low) * (rank - seen) / count, 1)
        seen += count
    return round(_bounds(max(histogram))[1], 1)  # unreachable with q < 1; kept total


def period_days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def quarter_closed(hours: BusinessHours | None, day: date, quarter: int) -> bool:
    """Whether the middle of a quarter hour of the org's day is outside its business hours."""
    if hours is None:
        return False
    wall = datetime.combine(day, time(0)) + timedelta(minutes=quarter * QUARTER_MINUTES + 7.5)
    return not is_open(hours, wall.replace(tzinfo=hours.zone).astimezone(UTC))


class ClosedQuarters:
    """Which quarter hours of each day are closed, each day's pattern worked out once per kind
    of day: days of the same weekday, with the same closed-day marks (the day and the one
    before: a range may pass midnight) and the same UTC offsets at their start and end (a
    daylight-saving change) are closed at the same quarters."""

    def __init__(self, hours: BusinessHours | None) -> None:
        self.hours = hours
        self.patterns: dict[tuple[Any, ...], frozenset[int]] = {}
        self.days: dict[date, frozenset[int]] = {}

    def of(self, day: date) -> frozenset[int]:
        if day not in self.days:
            self.days[day] = self._pattern(day)
        return self.days[day]

    def _pattern(self, day: date) -> frozenset[int]:
        hours = self.hours
        if hours is None:
            return frozenset()
        start = datetime.combine(day, time(0)).replace(tzinfo=hours.zone)
        end = datetime.combine(day, time(23, 59)).replace(tzinfo=hours.zone)
        key = (
            day.weekday(),
            day in hours.closed,
            day - timedelta(days=1) in hours.closed,
            start.utcoffset(),
            end.utcoffset(),
        )
        if key not in self.patterns:
            self.patterns[key] = frozenset(
                q for q in range(24 * 60 // QUARTER_MINUTES) if quarter_closed(hours, day, q)
            )
        return self.patterns[key]


@dataclass(frozen=True)
class InsightRows:
    """What api.insight_queries read for one period."""

    conversations: Sequence[ConversationDay]
    quarters: Sequence[QuarterCount]
    handoffs: Sequence[HandoffCount]
    replies: Sequence[ReplyBucket]
    tokens: Sequence[TokenDay]
    top_skills: Sequence[SkillCount]
    top_unanswered: Sequence[SkillCount]
    tokens_truncated: bool = False


def _per_day(days: list[date], values: Mapping[date, float]) -> list[float]:
    return [values.get(d, 0) for d in days]


def _conversation_series(days: list[date], rows: Iterable[ConversationDay]) -> dict[str, Any]:
    total = {r.day: r.conversations for r in rows}
    person = {r.day: r.with_person for r in rows}
    return {
        "conversations": _per_day(days, total),
        "conversations_agent_only": [total.get(d, 0) - person.get(d, 0) for d in days],
        "conversations_with_person": _per_day(days, person),
    }


def _handoff_series(days: list[date], rows: Iterable[HandoffCount]) -> dict[str, Any]:
    by_cause: dict[str, dict[date, int]] = defaultdict(dict)
    total: dict[date, int] = defaultdict(int)
    for r in rows:
        by_cause[r.cause][r.day] = by_cause[r.cause].get(r.day, 0) + r.handoffs
        total[r.day] += r.handoffs
    series: dict[str, Any] = {"handoffs": _per_day(days, total)}
    for cause in CAUSES:
        series[f"handoffs_{cause}"] = _per_day(days, by_cause.get(cause, {}))
    return series


def _histograms(rows: Iterable[ReplyBucket], who: str) -> dict[date, dict[int, int]]:
    found: dict[date, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        if r.who == who:
            found[r.day][r.bucket] += r.replies
    return found


def _reply_series(days: list[date], rows: Sequence[ReplyBucket]) -> dict[str, Any]:
    series: dict[str, Any] = {}
    for who, name in (("person", "person_first_reply"), ("agent", "agent_reply")):
        per_day = _histograms(rows, who)
        series[f"{name}_p50_s"] = [percentile(per_day.get(d, {}), 0.5) for d in days]
        series[f"{name}_p90_s"] = [percentile(per_day.get(d, {}), 0.9) for d in days]
    return series


def _after_hours_series(
    days: list[date], rows: Iterable[QuarterCount], hours: BusinessHours | None
) -> dict[str, Any]:
    total: dict[date, int] = defaultdict(int)
    closed: dict[date, int] = defaultdict(int)
    quarters = ClosedQuarters(hours)
    for r in rows:
        total[r.day] += r.messages
        if r.quarter in quarters.of(r.day):
            closed[r.day] += r.messages
    return {
        "customer_messages": _per_day(days, total),
        "customer_messages_after_hours": _per_day(days, closed),
        "after_hours_share": [
            round(100 * closed[d] / total[d], 1) if total.get(d) else None for d in days
        ],
    }


def _token_series(
    days: list[date], rows: Iterable[TokenDay], prices: ModelPrices
) -> tuple[dict[str, Any], list[str]]:
    fresh: dict[date, int] = defaultdict(int)
    cached: dict[date, int] = defaultdict(int)
    output: dict[date, int] = defaultdict(int)
    cost: dict[date, float] = defaultdict(float)
    unpriced: set[str] = set()
    for r in rows:
        fresh[r.day] += max(r.input_tokens - r.cache_read_tokens, 0)
        cached[r.day] += r.cache_read_tokens
        output[r.day] += r.output_tokens
        price = prices.get((r.provider, r.model))
        if price is None:
            unpriced.add(f"{r.provider}/{r.model}")
        else:
            cost[r.day] += price.cost_brl(r.input_tokens, r.cache_read_tokens, r.output_tokens)
    series: dict[str, Any] = {
        "tokens_input": _per_day(days, fresh),
        "tokens_cached_input": _per_day(days, cached),
        "tokens_output": _per_day(days, output),
        "cost_brl": [round(cost.get(d, 0.0), 2) for d in days] if prices else [None] * len(days),
    }
    return series, sorted(unpriced)


def _summary(rows: InsightRows) -> dict[str, Any]:
    person: dict[int, int] = defaultdict(int)
    agent: dict[int, int] = defaultdict(int)
    for r in rows.replies:
        (person if r.who == "person" else agent)[r.bucket] += r.replies
    return {
        "person_first_reply_p50_s": percentile(person, 0.5),
        "person_first_reply_p90_s": percentile(person, 0.9),
        "person_first_replies": sum(person.values()),
        "agent_reply_p50_s": percentile(agent, 0.5),
        "agent_reply_p90_s": percentile(agent, 0.9),
        "agent_replies": sum(agent.values()),
    }


def insights_json(
    first: date,
    last: date,
    rows: InsightRows,
    *,
    prices: ModelPrices,
    hours: BusinessHours | None,
    timezone: str,
) -> dict[str, Any]:
    """`{"days": [...], "series": {name: [one value per day]}, ...}` for GET /v1/insights."""
    days = period_days(first, last)
    tokens, unpriced = _token_series(days, rows.tokens, prices)
    series = {
        **_conversation_series(days, rows.conversations),
        **_handoff_series(days, rows.handoffs),
        **_reply_series(days, rows.replies),
        **_after_hours_series(days, rows.quarters, hours),
        **tokens,
    }
    return {
        "from": first.isoformat(),
        "to": last.isoformat(),
        "timezone": timezone,
        "business_hours": hours is not None,
        "days": [d.isoformat() for d in days],
        "series": series,
        "utc_series": list(UTC_SERIES),
        "summary": _summary(rows),
        "top_skills": [{"name": s.name, "uses": s.count} for s in rows.top_skills],
        "top_unanswered": [{"name": s.name, "searches": s.count} for s in rows.top_unanswered],
        "priced": bool(prices),
        "unpriced_models": unpriced,
        "truncated": rows.tokens_truncated,
    }
