"""SQL of the Painel's pending counts: customer messages and agent replies are appended to
insight_pending as they are stored (the trigger skillet_insight_message), and folded into the
Painel's rollups here (skillet_insight_fold): by the Painel's reader for its org before it
reads, and by the worker's conversation sweep for every org."""

from __future__ import annotations

import uuid

import asyncpg

FOLD_INSIGHT_COUNTS = "select skillet_insight_fold($1)"


async def fold_insight_counts(conn: asyncpg.Connection, org: uuid.UUID | None) -> None:
    """Fold `org`'s pending counts (every org's when None) into the rollups."""
    await conn.execute(FOLD_INSIGHT_COUNTS, org)
