"""How long an HTTP server asks us to wait before trying again (model providers, WhatsApp)."""

from __future__ import annotations

import email.utils
import math
from collections.abc import Mapping
from datetime import UTC, datetime


def parse_retry_after(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds from `retry-after-ms`, else `retry-after` (seconds or an HTTP date); None when
    the server does not say, or says nonsense. Header names in any case."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = _seconds(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = (lowered.get("retry-after") or "").strip()
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _seconds(value: str | None) -> float | None:
    try:
        number = float(value) if value else None
    except ValueError:
        return None
    return None if number is None or not math.isfinite(number) else max(0.0, number)
