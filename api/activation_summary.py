"""A skill's activations per UTC day, summed for the last 7 and 30 days. Pure.

"The last N days" are the N UTC days ending today, today included: a row of day
`today - N` is outside. Days without a row count zero and are listed, so a chart needs no
gap-filling.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from api.skill_queries import ActivationDay

WINDOWS_DAYS = (7, 30)
SERIES_DAYS = max(WINDOWS_DAYS)


def summarize_activations(rows: Iterable[ActivationDay], today: date) -> dict[str, Any]:
    by_day = {r.day: r for r in rows}
    days = [today - timedelta(days=n) for n in range(SERIES_DAYS - 1, -1, -1)]
    series = [
        {
            "day": d.isoformat(),
            "hard": by_day[d].hard if d in by_day else 0,
            "intent": by_day[d].intent if d in by_day else 0,
            "probe": by_day[d].probe if d in by_day else 0,
        }
        for d in days
    ]
    summary: dict[str, Any] = {"today": today.isoformat()}
    for window in WINDOWS_DAYS:
        recent = series[-window:]
        summary[f"last_{window}_days"] = {
            "hard": sum(d["hard"] for d in recent),
            "intent": sum(d["intent"] for d in recent),
            "probe": sum(d["probe"] for d in recent),
        }
    summary["days"] = series
    return summary
