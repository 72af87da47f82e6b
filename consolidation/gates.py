"""Whether an org consolidates this cycle, pure: the opt-in, the watermark, memory pressure.

Order is the contract (the first gate that holds names the skip): `off` (the org did not opt
in; `--force` does not lift it: a person opts in), `watermark` (no agent-authored version
since the org's last consolidation: nothing new to associate or merge), `no_pressure` (the
skill index fits in half of SKILLET_INDEX_BUDGET_BYTES and the org has at most
SKILLET_CONSOLIDATE_MIN_SKILLS agent-authored skills). `force` skips the last two.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ConsolidationMode(StrEnum):
    OFF = "off"
    REVIEW = "review"


class SkipReason(StrEnum):
    OFF = "off"
    WATERMARK = "watermark"
    NO_PRESSURE = "no_pressure"


@dataclass(frozen=True)
class Pressure:
    index_budget_bytes: int = 16_384
    min_skills: int = 20


def watermark_skip(last_agent_change_at: datetime | None, consolidated_at: datetime | None) -> bool:
    """Skip when nothing the agent wrote is newer than the last consolidation."""
    if consolidated_at is None:
        return last_agent_change_at is None
    return last_agent_change_at is None or last_agent_change_at <= consolidated_at


def under_pressure(index_bytes: int, agent_skills: int, pressure: Pressure) -> bool:
    return index_bytes * 2 > pressure.index_budget_bytes or agent_skills > pressure.min_skills


def skip_reason(
    mode: str,
    *,
    last_agent_change_at: datetime | None,
    consolidated_at: datetime | None,
    index_bytes: int,
    agent_skills: int,
    pressure: Pressure,
    force: bool,
) -> SkipReason | None:
    if mode != ConsolidationMode.REVIEW:
        return SkipReason.OFF
    if force:
        return None
    if watermark_skip(last_agent_change_at, consolidated_at):
        return SkipReason.WATERMARK
    if not under_pressure(index_bytes, agent_skills, pressure):
        return SkipReason.NO_PRESSURE
    return None
