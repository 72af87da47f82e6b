"""Batching usage events: sums per key, hard rows are uses, served references are views."""

from __future__ import annotations

import uuid

from skills.models import LoadedSkill
from skills.usage import UsageBump, UsageEvent, sum_bumps
from skills.usage_queries import CounterDelta
from turn.activation_writer import VIEW_TRIGGER, usage_bumps, view_rows
from turn.queries import ActivationRow

ORG_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
ORG_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")


def test_events_are_summed_per_key_in_a_stable_order() -> None:
    bumps = [
        UsageBump(ORG_B, "frete", UsageEvent.USE),
        UsageBump(ORG_A, "frete", UsageEvent.VIEW),
        UsageBump(ORG_A, "boleto", UsageEvent.USE),
        UsageBump(ORG_A, "frete", UsageEvent.USE),
        UsageBump(ORG_A, "frete", UsageEvent.USE),
        UsageBump(ORG_A, "frete", UsageEvent.PATCH),
    ]
    assert sum_bumps(bumps) == [
        CounterDelta(ORG_A, "boleto", uses=1),
        CounterDelta(ORG_A, "frete", uses=2, views=1, patches=1),
        CounterDelta(ORG_B, "frete", uses=1),
    ]
    assert sum_bumps([]) == []


def test_hard_rows_are_uses_views_are_views_probes_count_nothing() -> None:
    version = uuid.uuid4()
    rows = [
        ActivationRow(ORG_A, "frete", version, "hard", "job-1"),
        ActivationRow(ORG_A, "boleto", None, "probe", "job-1"),
        ActivationRow(ORG_A, "frete", version, VIEW_TRIGGER, None),
    ]
    assert usage_bumps(rows) == [
        UsageBump(ORG_A, "frete", UsageEvent.USE),
        UsageBump(ORG_A, "frete", UsageEvent.VIEW),
    ]


def test_a_view_row_names_the_matched_skill_and_its_version() -> None:
    frete = LoadedSkill(name="frete", description="d", body="b", version_id=uuid.uuid4())
    boleto = LoadedSkill(name="boleto", description="d", body="b", version_id=uuid.uuid4())
    assert view_rows(ORG_A, [boleto, frete], "frete") == [
        ActivationRow(ORG_A, "frete", frete.version_id, VIEW_TRIGGER, None)
    ]
    assert view_rows(ORG_A, [boleto], "frete") == []
    assert view_rows(ORG_A, [boleto], None) == []
