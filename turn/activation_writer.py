"""The activation recorder's batch writer: raw `skill_activations` rows, one statement.

Telemetry only: the counts the curator judges by (uses, views) and the daily activation
counts are written durably by each reply's commit (skillet_commit_turn), so a dropped batch loses
no count that matters.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from turn.activation_queries import ActivationRow, insert_activations


async def write_activation_batch(conn: asyncpg.Connection, rows: Sequence[ActivationRow]) -> None:
    """Telemetry, so it does not wait for the WAL flush; raises on failure (the recorder counts)."""
    if rows:
        await insert_activations(conn, rows)
