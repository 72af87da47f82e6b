"""The curator's rules, pure: next_state, the per-org report of one pass, its JSON (no I/O).

These are the reference. A real pass evaluates the same rules set-wise inside Postgres
(curator_next_state and skillet_curator_pass, skillet_data/functions.sql, called from
skills/curator/queries.py);
tests/integration/test_curator_sql.py holds the two equal, case by case and report by report.
"""

from __future__ import annotations

import json
import operator
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, NamedTuple

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
    current = _STATES.get(state)
    if current is None:
        raise ValueError(f"unknown skill state {state!r}")
    if last_activity_at is None:
        # The seed anchors "never active" at +infinity: only the reactivation branch can apply.
        return SkillState.ACTIVE if current is SkillState.STALE else current
    if last_activity_at <= archive_cutoff and current is not SkillState.ARCHIVED:
        return SkillState.ARCHIVED
    if last_activity_at <= stale_cutoff and current is SkillState.ACTIVE:
        return SkillState.STALE
    if last_activity_at > stale_cutoff and current is SkillState.STALE:
        return SkillState.ACTIVE
    return current


# A dict lookup, not SkillState(...): plan_report calls next_state once per skill.
_STATES: dict[str, SkillState] = {str(s): s for s in SkillState}


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


# The per-skill values below are NamedTuples (immutable, like frozen dataclasses, but several
# times cheaper to build): the report of a pass over 100k skills holds 100k of them.


class SkillRecord(NamedTuple):
    """One installed skill as a pass sees it (no usage row: active, unpinned, never used)."""

    name: str
    created_by: str
    state: str = SkillState.ACTIVE
    pinned: bool = False
    last_activity_at: datetime | None = None


class Transition(NamedTuple):
    """`from_state`/`to_state` are SkillState values (the member or its plain string)."""

    name: str
    from_state: str
    to_state: str

    def to_json(self) -> dict[str, str]:
        # StrEnum members are str: JSON writes their values, no `.value` lookups needed.
        return {"name": self.name, "from": self.from_state, "to": self.to_state}


class Skip(NamedTuple):
    """`reason` is a SkipReason value (the member or its plain string)."""

    name: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "reason": self.reason}


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
    for record in sorted(records, key=_by_name):
        if record.created_by != AGENT:
            skipped.append(Skip(record.name, SkipReason.NOT_AGENT_CREATED))
        elif record.pinned:
            skipped.append(Skip(record.name, SkipReason.PINNED))
        else:
            to = next_state(record.state, record.last_activity_at, stale_cutoff, archive_cutoff)
            if to == record.state:
                skipped.append(Skip(record.name, SkipReason.NO_CHANGE))
            else:
                transitioned.append(Transition(record.name, record.state, to))
    return CuratorReport(organization_id, tuple(transitioned), tuple(skipped))


def _by_name(record: SkillRecord) -> str:
    return record.name


_TRANSITION_FIELDS = operator.itemgetter("name", "from", "to")
_SKIP_FIELDS = operator.itemgetter("name", "reason")


def report_from_json(
    organization_id: uuid.UUID, transitioned_json: str, skipped_json: str
) -> CuratorReport:
    """A report from its JSON lists (the shape `to_json` writes), e.g. a pass's own output."""
    # map/itemgetter/_make keep the per-skill work in C: a pass may report 100k skills.
    transitioned = map(_TRANSITION_FIELDS, json.loads(transitioned_json))
    skipped = map(_SKIP_FIELDS, json.loads(skipped_json))
    return CuratorReport(
        organization_id,
        tuple(map(Transition._make, transitioned)),
        tuple(map(Skip._make, skipped)),
    )
