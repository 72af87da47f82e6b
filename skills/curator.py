"""The curator's decisions, pure: next_state and the per-org report of one pass (no I/O)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from skills.models import SkillState

AGENT = "agent"


class SkipReason(StrEnum):
    NOT_AGENT_CREATED = "not-agent-created"
    PINNED = "pinned"
    NO_CHANGE = "no-change"


def next_state(
    state: str,
    last_activity_at: datetime | None,
    stale_cutoff: datetime,
    archive_cutoff: datetime,
) -> SkillState:
    """The state a skill should be in; the branch order is the contract.

    Never active (None) counts as newer than any cutoff, so it never ages. Archive first: an
    active skill idle past the archive cutoff goes straight to archived, skipping stale. Then
    stale, then reactivation of a stale skill with activity newer than the stale cutoff.
    Cutoffs are inclusive (activity exactly at a cutoff is old). Archived is only ever left
    by an explicit restore.
    """
    current = SkillState(state)
    if last_activity_at is None:
        # The seed anchors "never active" at +infinity: only the reactivation branch can apply.
        return SkillState.ACTIVE if current == SkillState.STALE else current
    if last_activity_at <= archive_cutoff and current != SkillState.ARCHIVED:
        return SkillState.ARCHIVED
    if last_activity_at <= stale_cutoff and current == SkillState.ACTIVE:
        return SkillState.STALE
    if last_activity_at > stale_cutoff and current == SkillState.STALE:
        return SkillState.ACTIVE
    return current


@dataclass(frozen=True)
class CuratorPolicy:
    """How long a skill may idle: stale after `stale_after`, archived after `archive_after`."""

    stale_after: timedelta = timedelta(days=30)
    archive_after: timedelta = timedelta(days=90)

    def __post_init__(self) -> None:
        if self.stale_after <= timedelta(0) or self.archive_after < self.stale_after:
            raise ValueError("need 0 < stale_after <= archive_after")

    def cutoffs(self, now: datetime) -> tuple[datetime, datetime]:
        """(stale_cutoff, archive_cutoff) for a pass at `now`."""
        return now - self.stale_after, now - self.archive_after


@dataclass(frozen=True)
class SkillRecord:
    """One installed skill as a pass sees it (no usage row: active, unpinned, never used)."""

    name: str
    created_by: str
    state: str = SkillState.ACTIVE
    pinned: bool = False
    last_activity_at: datetime | None = None


@dataclass(frozen=True)
class Transition:
    name: str
    from_state: SkillState
    to_state: SkillState

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "from": str(self.from_state), "to": str(self.to_state)}


@dataclass(frozen=True)
class Skip:
    name: str
    reason: SkipReason

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "reason": str(self.reason)}


@dataclass(frozen=True)
class CuratorReport:
    """One org's pass: both lists sorted by name. Once returned by a real run, it is durable."""

    organization_id: uuid.UUID
    transitioned: tuple[Transition, ...]
    skipped: tuple[Skip, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "organization_id": str(self.organization_id),
            "transitioned": [t.to_json() for t in self.transitioned],
            "skipped": [s.to_json() for s in self.skipped],
        }


def plan_report(
    organization_id: uuid.UUID,
    records: Iterable[SkillRecord],
    stale_cutoff: datetime,
    archive_cutoff: datetime,
) -> CuratorReport:
    """Gate by provenance, then pin, then next_state; every skill lands in one list."""
    transitioned: list[Transition] = []
    skipped: list[Skip] = []
    for record in sorted(records, key=lambda r: r.name):
        if record.created_by != AGENT:
            skipped.append(Skip(record.name, SkipReason.NOT_AGENT_CREATED))
            continue
        if record.pinned:
            skipped.append(Skip(record.name, SkipReason.PINNED))
            continue
        current = SkillState(record.state)
        to = next_state(current, record.last_activity_at, stale_cutoff, archive_cutoff)
        if to == current:
            skipped.append(Skip(record.name, SkipReason.NO_CHANGE))
            continue
        transitioned.append(Transition(record.name, current, to))
    return CuratorReport(organization_id, tuple(transitioned), tuple(skipped))
