"""The activation recorder's batch writer: activation rows plus usage counters, one transaction.

The recorder (turn.activations) carries `ActivationRow`s; besides the `hard`/`probe` rows of
`skill_activations` it carries `view` rows (a served `read_skill_reference`), which only count
toward usage. Per batch: hard rows -> `use`, view rows -> `view`, both set-wise.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from skills.models import LoadedSkill
from skills.usage import UsageBump, UsageEvent, UsageStore
from turn.queries import ActivationRow, insert_activations, set_local_async_commit

VIEW_TRIGGER = "view"  # usage-only rows: never inserted into skill_activations
_ACTIVATION_TRIGGERS = frozenset({"hard", "probe"})
_USAGE_EVENTS = {"hard": UsageEvent.USE, VIEW_TRIGGER: UsageEvent.VIEW}


def view_rows(
    organization_id: uuid.UUID, matched: Sequence[LoadedSkill], skill_name: object
) -> list[ActivationRow]:
    """The row recording that one of this turn's matched skills had a reference served."""
    return [
        ActivationRow(organization_id, s.name, s.version_id, VIEW_TRIGGER, None)
        for s in matched
        if s.name == skill_name
    ][:1]


def usage_bumps(rows: Sequence[ActivationRow]) -> list[UsageBump]:
    return [
        UsageBump(r.organization_id, r.skill_name, _USAGE_EVENTS[r.trigger])
        for r in rows
        if r.trigger in _USAGE_EVENTS
    ]


async def write_activation_batch(
    conn: asyncpg.Connection, rows: Sequence[ActivationRow], usage: UsageStore
) -> None:
    """Telemetry, so it does not wait for the WAL flush; raises on failure (the recorder counts)."""
    activations = [r for r in rows if r.trigger in _ACTIVATION_TRIGGERS]
    bumps = usage_bumps(rows)
    async with conn.transaction():
        await set_local_async_commit(conn)
        if activations:
            await insert_activations(conn, activations)
        await usage.record(conn, bumps)
