"""The Painel's charts as shapes an SVG template draws (pure: values in, coordinates out).

No script and no style attribute: the console's CSP allows neither inline styles nor scripts,
so each shape carries a class (`s0`, `s1`, ... coloured by console.css) and a <title> (its
value, shown on hover and read by screen readers). The drawing is in a fixed viewBox that the
page scales to its width, so a phone shows the same chart smaller; the numbers are always in
the table beside it. A missing value (a day with nothing to measure) breaks a line instead of
drawing it at zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

WIDTH = 640.0
HEIGHT = 220.0
LEFT = 66.0  # room for the y labels (at a phone's larger font too)
RIGHT = 8.0
TOP = 10.0
BOTTOM = 26.0  # room for the x labels
MAX_X_LABELS = 8
Y_TICKS = 4

Format = Callable[[float], str]


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    series: int
    title: str


@dataclass(frozen=True)
class Line:
    points: str  # "x,y x,y ..." of one unbroken run
    series: int


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    series: int
    title: str


@dataclass(frozen=True)
class Chart:
    label: str  # what the chart shows, for aria-label
    legend: tuple[tuple[int, str], ...]
    y_ticks: tuple[tuple[float, str], ...]
    x_labels: tuple[tuple[float, str], ...]
    rects: tuple[Rect, ...] = ()
    lines: tuple[Line, ...] = ()
    dots: tuple[Dot, ...] = ()
    empty: bool = False
    width: float = WIDTH
    height: float = HEIGHT
    plot: tuple[float, float, float, float] = field(
        default=(LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM)
    )  # x0, y0, x1, y1


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 x 10^k at or above `value` (an axis' step)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if step * power >= value * (1 - 1e-9):
            return float(step * power)
    return float(10 * power)


def axis_top(maximum: float) -> tuple[float, float]:
    """(top, step) of an axis from 0 holding `maximum`: at most Y_TICKS + 1 round steps, each
    at least 1 (counts never read 0,5)."""
    step = max(nice_ceiling(maximum / (Y_TICKS + 1)), 1.0)
    return step * max(math.ceil(maximum / step - 1e-9), 1), step


def _y(value: float, top: float) -> float:
    span = HEIGHT - BOTTOM - TOP
    return round(HEIGHT - BOTTOM - span * (value / top), 1)


def _axes(
    days: Sequence[str], top: float, step: float, fmt: Format
) -> tuple[tuple[tuple[float, str], ...], tuple[tuple[float, str], ...], float]:
    slot = (WIDTH - LEFT - RIGHT) / max(len(days), 1)
    every = max(1, math.ceil(len(days) / MAX_X_LABELS))
    x_labels = tuple(
        (round(LEFT + slot * (i + 0.5), 1), day) for i, day in enumerate(days) if i % every == 0
    )
    y_ticks = tuple((_y(step * n, top), fmt(step * n)) for n in range(round(top / step) + 1))
    return y_ticks, x_labels, slot


def stacked_bars(
    label: str,
    days: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    fmt: Format,
    *,
    axis: Format | None = None,
    empty: bool | None = None,
) -> Chart:
    """One bar per day, the series stacked bottom up in the given order; `axis` formats the
    y ticks (default `fmt`); `empty` says there is nothing to show (default: all zero)."""
    totals = [sum(values[i] for _, values in series) for i in range(len(days))]
    top, step = axis_top(max(totals, default=0))
    y_ticks, x_labels, slot = _axes(days, top, step, axis or fmt)
    bar = max(slot * 0.7, 1.0)
    rects: list[Rect] = []
    for i, day in enumerate(days):
        base = 0.0
        for n, (name, values) in enumerate(series):
            value = values[i]
            if value <= 0:
                continue
            y0, y1 = _y(base, top), _y(base + value, top)
            x = LEFT + slot * i + (slot - bar) / 2
            title = f"{day} · {name}: {fmt(value)}"
            rects.append(Rect(round(x, 1), y1, round(bar, 1), round(y0 - y1, 1), n, title))
            base += value
    legend = tuple((n, name) for n, (name, _) in enumerate(series))
    nothing = not any(totals) if empty is None else empty
    return Chart(label, legend, y_ticks, x_labels, rects=tuple(rects), empty=nothing)


def lines(
    label: str,
    days: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    fmt: Format,
    *,
    axis: Format | None = None,
) -> Chart:
    """One line per series through the days that have a value; a lone value is a dot."""
    present = [v for _, values in series for v in values if v is not None]
    top, step = axis_top(max(present, default=0))
    y_ticks, x_labels, slot = _axes(days, top, step, axis or fmt)
    drawn: list[Line] = []
    dots: list[Dot] = []
    for n, (name, values) in enumerate(series):
        run: list[str] = []
        for i, value in enumerate(values):
            if value is None:
                if len(run) > 1:
                    drawn.append(Line(" ".join(run), n))
                run = []
                continue
            x, y = round(LEFT + slot * (i + 0.5), 1), _y(value, top)
            run.append(f"{x:.1f},{y:.1f}")
            dots.append(Dot(x, y, n, f"{days[i]} · {name}: {fmt(value)}"))
        if len(run) > 1:
            drawn.append(Line(" ".join(run), n))
    legend = tuple((n, name) for n, (name, _) in enumerate(series))
    return Chart(
        label, legend, y_ticks, x_labels, lines=tuple(drawn), dots=tuple(dots), empty=not present
    )


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str


ROW = 26.0  # height of a horizontal bar's row
NAME_WIDTH = 200.0  # room for the names left of the bars


@dataclass(frozen=True)
class Ranking:
    """Horizontal bars, largest first: a name left, its count right of the bar."""

    label: str
    rects: tuple[Rect, ...]
    names: tuple[Label, ...]
    values: tuple[Label, ...]
    height: float
    width: float = WIDTH
    empty: bool = False


def ranking(
    label: str, items: Sequence[tuple[str, float]], fmt: Format, series: int = 0
) -> Ranking:
    top = max((count for _, count in items), default=0) or 1
    span = WIDTH - NAME_WIDTH - 70.0  # room for the count after the longest bar
    rects, names, values = [], [], []
    for i, (name, count) in enumerate(items):
        y = i * ROW + 4
        width = round(max(span * count / top, 1.0), 1)
        shown = name if len(name) <= 28 else name[:27] + "…"
        rects.append(Rect(NAME_WIDTH, y, width, ROW - 8, series, f"{name}: {fmt(count)}"))
        names.append(Label(NAME_WIDTH - 8, y + ROW / 2, shown))
        values.append(Label(NAME_WIDTH + width + 6, y + ROW / 2, fmt(count)))
    return Ranking(
        label,
        tuple(rects),
        tuple(names),
        tuple(values),
        height=max(len(items), 1) * ROW + 8,
        empty=not items,
    )
