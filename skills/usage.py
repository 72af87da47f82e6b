"""The usage store: per-org skill telemetry (use/view/patch) read best-effort, written atomically.

A hard keyword match counts as a use, `read_skill_reference`/`skill_view` as a view, an agent
edit as a patch. `last_activity_at` is the newest of last used / viewed / patched / restored,
never the creation time. Reads degrade to "no record" (logged) so telemetry can never break a
turn; writes raise `UsageWriteError`, because a caller that writes wants to know.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import asyncpg
import structlog

from core.clock import Clock
from core.db_errors import DATABASE_ERRORS
from skills.curator.errors import SkillNotInstalled, UsageWriteError
from skills.usage_queries import (
    CounterDelta,
    UsageRecord,
    fetch_usage,
    fetch_usage_state_for_update,
    update_usage_pinned,
    update_usage_restored,
    upsert_usage_counters,
)

log = structlog.get_logger(__name__)


class UsageEvent(StrEnum):
    USE = "use"
    VIEW = "view"
    PATCH = "patch"


@dataclass(frozen=True)
class UsageBump:
    organization_id: uuid.UUID
    skill_name: str
    event: UsageEvent


@dataclass(frozen=True)
class Restored:
    record: UsageRecord
    previous_state: str
    absorbed_into: str | None = None  # the umbrella it had been absorbed into, if any


def sum_bumps(bumps: Iterable[UsageBump]) -> list[CounterDelta]:
    """One delta per (org, skill), sorted, so one statement can apply a whole batch."""
    counts = Counter((b.organization_id, b.skill_name, b.event) for b in bumps)
    keys = sorted({(org, name) for org, name, _ in counts}, key=lambda k: (str(k[0]), k[1]))
    return [
        CounterDelta(
            organization_id=org,
            skill_name=name,
            uses=counts[(org, name, UsageEvent.USE)],
            views=counts[(org, name, UsageEvent.VIEW)],
            patches=counts[(org, name, UsageEvent.PATCH)],
        )
        for org, name in keys
    ]


class UsageStore:
    """Usage telemetry on Postgres; the caller passes the connection and owns any transaction."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    async def record(self, conn: asyncpg.Connection, bumps: Sequence[UsageBump]) -> None:
        """Count every bump (one statement, atomic increments); raises UsageWriteError."""
        deltas = sum_bumps(bumps)
        if not deltas:
            return
        try:
            await upsert_usage_counters(conn, deltas, self._clock())
        except DATABASE_ERRORS as exc:
            raise UsageWriteError(f"usage counters not written: {exc!r}"[:300]) from exc

    async def get(
        self, conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str
    ) -> UsageRecord | None:
        """The record, or None when there is none or the read failed (logged, never raised)."""
        try:
            return await fetch_usage(conn, organization_id, skill_name)
        except DATABASE_ERRORS as exc:
            log.warning(
                "usage.read_failed",
                organization_id=str(organization_id),
                skill=skill_name,
                error=repr(exc)[:200],
            )
            return None

    async def set_pinned(
        self, conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str, pinned: bool
    ) -> UsageRecord:
        """Pin (the curator never touches it) or unpin an installed skill."""
        try:
            record = await update_usage_pinned(conn, organization_id, skill_name, pinned)
        except DATABASE_ERRORS as exc:
            raise UsageWriteError(f"pin not written: {exc!r}"[:300]) from exc
        if record is None:
            raise _not_installed(skill_name)
        return record

    async def restore(
        self, conn: asyncpg.Connection, organization_id: uuid.UUID, skill_name: str
    ) -> Restored:
        """Back to active, with activity stamped now so the next curator pass keeps it."""
        try:
            async with conn.transaction():
                previous, absorbed_into = await fetch_usage_state_for_update(
                    conn, organization_id, skill_name
                )
                record = await update_usage_restored(
                    conn, organization_id, skill_name, self._clock()
                )
        except DATABASE_ERRORS as exc:
            raise UsageWriteError(f"restore not written: {exc!r}"[:300]) from exc
        if record is None:
            raise _not_installed(skill_name)
        return Restored(
            record=record, previous_state=previous or "active", absorbed_into=absorbed_into
        )


def _not_installed(skill_name: str) -> SkillNotInstalled:
    return SkillNotInstalled(
        f"A skill {skill_name!r} não está instalada nesta organização; "
        "confira o nome com `skillet skills list`."
    )
