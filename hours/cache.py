"""Each org's business hours as a worker's turns read them: fetched at most once per
`ttl_s` per org (a change reaches every worker within that), never per turn.

Holds org settings only (no conversation's state), so any worker may answer any conversation
with its own copy. Bounded: past `max_orgs` entries the oldest half is dropped.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from core.tenancy import org_connection
from hours.change import business_hours
from hours.opening import BusinessHours
from hours.queries import fetch_business_hours
from hours.texts import ClosedNow, closed_now

DEFAULT_TTL_S = 30.0  # how stale an org's hours may be in a worker, in seconds
MAX_ORGS = 10_000


class BusinessHoursCache:
    def __init__(
        self,
        *,
        ttl_s: float = DEFAULT_TTL_S,
        max_orgs: int = MAX_ORGS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._max_orgs = max_orgs
        self._monotonic = monotonic
        self._entries: dict[uuid.UUID, tuple[float, BusinessHours | None]] = {}

    async def get(self, pool: Any, organization_id: uuid.UUID) -> BusinessHours | None:
        """The org's hours (None: none set, always open)."""
        now = self._monotonic()
        entry = self._entries.get(organization_id)
        if entry is not None and now - entry[0] < self._ttl_s:
            return entry[1]
        async with org_connection(pool, organization_id) as conn:
            hours = business_hours(await fetch_business_hours(conn, organization_id))
        if len(self._entries) >= self._max_orgs:
            oldest = sorted(self._entries.items(), key=lambda item: item[1][0])
            for org, _ in oldest[: self._max_orgs // 2]:
                del self._entries[org]
        self._entries[organization_id] = (now, hours)
        return hours

    async def closed_now(
        self, pool: Any, organization_id: uuid.UUID, at: datetime
    ) -> ClosedNow | None:
        """None when the org is open at `at` (or has no hours)."""
        return closed_now(await self.get(pool, organization_id), at)
