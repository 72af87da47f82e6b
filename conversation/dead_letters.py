"""Where a turn leaves what it could not do, for an operator to look at (and requeue)."""

from __future__ import annotations

import uuid
from typing import Any, Protocol

import structlog

log = structlog.get_logger(__name__)


class DeadLetters(Protocol):
    """Where a turn leaves what it could not do, for an operator to look at (and requeue)."""

    async def record(
        self, *, organization_id: uuid.UUID, function: str, payload: Any, code: str, error: str
    ) -> None: ...


class NoDeadLetters:
    """Logs only (unit tests, benchmarks)."""

    async def record(
        self, *, organization_id: uuid.UUID, function: str, payload: Any, code: str, error: str
    ) -> None:
        return None
