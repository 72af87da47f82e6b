"""next_state and the per-org report, on tables of fixed datetimes (no services)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from skills.curator import (
    CuratorPolicy,
    SkillRecord,
    SkipReason,
    Transition,
    next_state,
    plan_report,
)
from skills.models import SkillState

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
STALE_CUTOFF, ARCHIVE_CUTOFF = CuratorPolicy().cutoffs(NOW)
ORG = uuid.UUID("00000000-0000-0000-0000-0000000000aa")


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


ACTIVE, STALE, ARCHIVED = SkillState.ACTIVE, SkillState.STALE, SkillState.ARCHIVED


@pytest.mark.parametrize(
    ("state", "last_activity_at", "expected"),
    [
        # never active: newer than any cutoff, so it never ages ...
        (ACTIVE, None, ACTIVE),
        (ARCHIVED, None, ARCHIVED),
        # ... and a stale one without activity reactivates (anchor +infinity > stale cutoff)
        (STALE, None, ACTIVE),
        # fresh
        (ACTIVE, days_ago(1), ACTIVE),
        (ACTIVE, days_ago(29.99), ACTIVE),
        # stale cutoff is inclusive
        (ACTIVE, days_ago(30), STALE),
        (ACTIVE, days_ago(45), STALE),
        (ACTIVE, days_ago(89.99), STALE),
        # archive first: an active skill past the archive cutoff skips stale
        (ACTIVE, days_ago(90), ARCHIVED),
        (ACTIVE, days_ago(120), ARCHIVED),
        (STALE, days_ago(120), ARCHIVED),
        (STALE, days_ago(45), STALE),
        (STALE, days_ago(30), STALE),
        # reactivation: stale with activity newer than the stale cutoff
        (STALE, days_ago(29.99), ACTIVE),
        (STALE, days_ago(0), ACTIVE),
        # archived is terminal for the curator, recent activity or not (restore is explicit)
        (ARCHIVED, days_ago(1), ARCHIVED),
        (ARCHIVED, days_ago(45), ARCHIVED),
        (ARCHIVED, days_ago(400), ARCHIVED),
    ],
)
def test_next_state(state: SkillState, last_activity_at: datetime | None, expected: str) -> None:
    assert next_state(state, last_activity_at, STALE_CUTOFF, ARCHIVE_CUTOFF) == expected


def test_next_state_takes_plain_strings_and_returns_str_values() -> None:
    result = next_state("active", days_ago(45), STALE_CUTOFF, ARCHIVE_CUTOFF)
    assert result == "stale" and isinstance(result, str)


def test_an_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError):
        next_state("deleted", None, STALE_CUTOFF, ARCHIVE_CUTOFF)


def test_cutoffs_follow_the_policy() -> None:
    policy = CuratorPolicy(stale_after=timedelta(days=7), archive_after=timedelta(days=14))
    assert policy.cutoffs(NOW) == (days_ago(7), days_ago(14))


@pytest.mark.parametrize(("stale", "archive"), [(0, 10), (30, 20), (-1, 5)])
def test_inconsistent_policies_are_refused(stale: int, archive: int) -> None:
    with pytest.raises(ValueError):
        CuratorPolicy(stale_after=timedelta(days=stale), archive_after=timedelta(days=archive))


def test_report_gates_provenance_then_pin_then_state_and_sorts_by_name() -> None:
    records = [
        SkillRecord("zeta", "agent", ACTIVE, False, days_ago(45)),
        SkillRecord("alpha", "agent", ACTIVE, False, days_ago(120)),
        SkillRecord("user-made", "user", ACTIVE, False, days_ago(400)),
        SkillRecord("pinned-old", "agent", ACTIVE, True, days_ago(365)),
        SkillRecord("never-used", "agent", ACTIVE, False, None),
        SkillRecord("back", "agent", STALE, False, days_ago(2)),
        SkillRecord("platform-fork", "platform", STALE, False, days_ago(2)),
    ]
    report = plan_report(ORG, records, STALE_CUTOFF, ARCHIVE_CUTOFF)
    assert report.transitioned == (
        Transition("alpha", ACTIVE, ARCHIVED),
        Transition("back", STALE, ACTIVE),
        Transition("zeta", ACTIVE, STALE),
    )
    assert [(s.name, s.reason) for s in report.skipped] == [
        ("never-used", SkipReason.NO_CHANGE),
        ("pinned-old", SkipReason.PINNED),
        ("platform-fork", SkipReason.NOT_AGENT_CREATED),
        ("user-made", SkipReason.NOT_AGENT_CREATED),
    ]
    assert report.to_json() == {
        "organization_id": str(ORG),
        "transitioned": [
            {"name": "alpha", "from": "active", "to": "archived"},
            {"name": "back", "from": "stale", "to": "active"},
            {"name": "zeta", "from": "active", "to": "stale"},
        ],
        "skipped": [
            {"name": "never-used", "reason": "no-change"},
            {"name": "pinned-old", "reason": "pinned"},
            {"name": "platform-fork", "reason": "not-agent-created"},
            {"name": "user-made", "reason": "not-agent-created"},
        ],
    }


def test_a_pinned_non_agent_skill_is_reported_as_not_agent_created() -> None:
    records = [SkillRecord("x", "user", ACTIVE, True, days_ago(400))]
    report = plan_report(ORG, records, STALE_CUTOFF, ARCHIVE_CUTOFF)
    assert [s.reason for s in report.skipped] == [SkipReason.NOT_AGENT_CREATED]
