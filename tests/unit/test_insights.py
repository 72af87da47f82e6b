"""The Painel's pure parts: reply-time histograms and their percentiles, after-hours quarters,
the period's defaults and bounds, model prices (SKILLET_MODEL_PRICES), the SVG shapes."""

from __future__ import annotations

import random
from collections import Counter
from datetime import date

import pytest
from pydantic import ValidationError

from api.console.charts import axis_top, lines, nice_ceiling, ranking, stacked_bars
from api.console.painel import duration, money, tokens
from api.errors import ApiError
from api.insight_routes import parse_period
from api.insight_series import bucket_of, percentile, quarter_closed
from api.model_prices import ModelPrice, ModelPricesInvalid, parse_model_prices
from hours.opening import BusinessHours
from hours.schedule import load_zone, parse_schedule
from worker.settings import Settings

TODAY = date(2026, 12, 3)


def _histogram(values: list[float]) -> dict[int, int]:
    return dict(Counter(bucket_of(v) for v in values))


@pytest.mark.parametrize("seed", range(5))
def test_percentiles_from_the_histogram_read_within_12_percent(seed: int) -> None:
    rng = random.Random(seed)
    values = sorted(rng.lognormvariate(4, 1.2) for _ in range(2000))  # minutes-ish replies
    hist = _histogram(values)
    for q in (0.5, 0.9):
        exact = values[int(q * len(values))]
        found = percentile(hist, q)
        assert found is not None and abs(found - exact) <= 0.125 * exact + 1


def test_an_empty_histogram_has_no_percentile_and_small_times_stay_small() -> None:
    assert percentile({}, 0.5) is None
    assert bucket_of(0) == bucket_of(0.4) == bucket_of(1.0) == 0
    assert bucket_of(1.01) == 1 and bucket_of(20 * 86400) == 63 == bucket_of(1e12)
    assert percentile({0: 4}, 0.5) == 0.5


def test_after_hours_quarters_follow_the_schedule_in_the_orgs_zone() -> None:
    hours = BusinessHours(parse_schedule("seg-sex 09:00-18:00"), load_zone("America/Sao_Paulo"))
    monday = date(2026, 11, 30)
    assert quarter_closed(hours, monday, 35)  # 08:45-09:00
    assert not quarter_closed(hours, monday, 36)  # 09:00-09:15
    assert not quarter_closed(hours, monday, 71)  # 17:45-18:00
    assert quarter_closed(hours, monday, 72)
    assert quarter_closed(hours, date(2026, 12, 5), 48)  # Saturday noon
    assert not quarter_closed(None, monday, 0)  # no schedule: always open


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ({}, (date(2026, 11, 4), TODAY)),
        ({"to": "2026-10-31"}, (date(2026, 10, 2), date(2026, 10, 31))),
        ({"from": "2026-11-30"}, (date(2026, 11, 30), TODAY)),
        ({"from": "2026-01-01"}, (date(2026, 1, 1), date(2026, 1, 30))),
        ({"from": "2026-12-24"}, (date(2026, 12, 24), date(2026, 12, 24))),  # ahead of today
        ({"from": "2026-09-05", "to": "2026-12-03"}, (date(2026, 9, 5), TODAY)),  # 90 days
    ],
)
def test_the_period_defaults(query: dict[str, str], period: tuple[date, date]) -> None:
    assert parse_period(query, TODAY) == period


@pytest.mark.parametrize(
    ("query", "code", "field"),
    [
        ({"from": "2026-02-30"}, "invalid_date", "from"),
        ({"to": "hoje"}, "invalid_date", "to"),
        ({"from": "2026-1-01"}, "invalid_date", "from"),
        ({"from": "2026-12-02", "to": "2026-12-01"}, "from_after_to", "from"),
        ({"from": "2026-09-04", "to": "2026-12-03"}, "range_too_long", "from"),
        ({"from": "0001-01-01", "to": "9999-12-31"}, "range_too_long", "from"),
    ],
)
def test_refused_periods_name_their_field(query: dict[str, str], code: str, field: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse_period(query, TODAY)
    assert (refused.value.status, refused.value.code, refused.value.extra) == (
        422,
        code,
        {"field": field},
    )


PRICES = '{"anthropic/claude-sonnet-4-5": {"input": 16.5, "cached_input": 1.65, "output": 82.5}}'


def test_prices_are_read_per_provider_and_model_and_cost_in_reais() -> None:
    prices = parse_model_prices(PRICES)
    price = prices[("anthropic", "claude-sonnet-4-5")]
    assert price == ModelPrice(16.5, 1.65, 82.5)
    # 1M prompt tokens, 400k of them from the cache, and 10k written.
    assert price.cost_brl(1_000_000, 400_000, 10_000) == pytest.approx(9.9 + 0.66 + 0.825)
    assert parse_model_prices(None) == {} == parse_model_prices("  ")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not JSON"),
        ("[]", "JSON object"),
        ('{"claude": {"input": 1, "cached_input": 1, "output": 1}}', "<provider>/<model>"),
        ('{"a/b": {"input": 1, "output": 1}}', "missing cached_input"),
        ('{"a/b": {"input": 1, "cached_input": 1, "output": 1, "x": 2}}', "unknown x"),
        ('{"a/b": {"input": -1, "cached_input": 1, "output": 1}}', "from 0"),
        ('{"a/b": {"input": "1", "cached_input": 1, "output": 1}}', "must be a number"),
        ('{"a/b": {"input": true, "cached_input": 1, "output": 1}}', "must be a number"),
        ('{"a/b": {"input": NaN, "cached_input": 1, "output": 1}}', "from 0"),
        ('{"a/b": [1, 2, 3]}', "an object"),
    ],
)
def test_bad_prices_are_refused_saying_what_to_fix(text: str, says: str) -> None:
    with pytest.raises(ModelPricesInvalid, match=says.replace("[", r"\[")):
        parse_model_prices(text)
    with pytest.raises(ValidationError, match="SKILLET_MODEL_PRICES"):
        Settings(model_prices=text)


def test_the_setting_comes_from_its_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLET_MODEL_PRICES", PRICES)
    assert ("anthropic", "claude-sonnet-4-5") in Settings().prices()


def test_axes_end_on_round_numbers() -> None:
    assert [nice_ceiling(v) for v in (0, 0.3, 7, 10, 11, 240)] == [1, 0.5, 10, 10, 20, 500]
    assert [axis_top(v) for v in (0, 1, 3, 7, 10, 45, 1234)] == [
        (1, 1),
        (1, 1),
        (3, 1),
        (8, 2),
        (10, 2),
        (50, 10),
        (1500, 500),
    ]


def test_stacked_bars_and_lines_draw_what_the_numbers_say() -> None:
    days = ["01/12", "02/12", "03/12"]
    chart = stacked_bars("x", days, [("a", [2, 0, 5]), ("b", [3, 0, 5])], str)
    assert [(r.series, r.title) for r in chart.rects] == [
        (0, "01/12 · a: 2"),
        (1, "01/12 · b: 3"),
        (0, "03/12 · a: 5"),
        (1, "03/12 · b: 5"),
    ]
    tall, short = chart.rects[2].height + chart.rects[3].height, chart.rects[0].height
    assert tall == pytest.approx(2 * (short + chart.rects[1].height))
    drawn = lines("y", [*days, "04/12"], [("m", [1.0, None, 2.0, 3.0])], str)
    assert len(drawn.lines) == 1 and len(drawn.dots) == 3  # the gap breaks the line
    assert stacked_bars("z", days, [("a", [0, 0, 0])], str).empty
    assert ranking("r", [], str).empty and len(ranking("r", [("a", 3)], str).rects) == 1


def test_numbers_read_as_in_brazil() -> None:
    assert [duration(s) for s in (4.2, 45, 125, 3600, 4500)] == [
        "4,2 s",
        "45 s",
        "2 min 5 s",
        "1 h",
        "1 h 15 min",
    ]
    assert money(1234.5) == "R$ 1.234,50"
    assert tokens(1_250_000) == "1,2 mi" and tokens(350_000) == "350,0 mil"
