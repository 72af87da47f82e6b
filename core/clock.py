"""Time as an injected dependency: the one place that reads the system clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Returns the current time, timezone-aware (UTC). Tests pass a fixed or stepping one."""

    def __call__(self) -> datetime: ...


def system_clock() -> datetime:
    """The production clock; everything else receives a `Clock` instead of calling this."""
    return datetime.now(UTC)
