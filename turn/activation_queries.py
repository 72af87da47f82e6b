"""SQL of raw skill activations: one batched, fire-and-forget statement per flush."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

SET_LOCAL_ASYNC_COMMIT = "set local synchronous_commit = off"


async def set_local_async_commit(conn: asyncpg.Connection) -> None:
    """Let the current transaction commit without waiting for its WAL flush.

    Only for writes a crash may lose: a later synchronous commit on the same server flushes
    the WAL up to and past this one, and until then the job is still in Redis and re-runs.
    """
    await conn.execute(SET_LOCAL_ASYNC_COMMIT)


INSERT_ACTIVATIONS = """
select skillet_record_activations($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[])
"""


@dataclass(frozen=True)
class ActivationRow:
    organization_id: uuid.UUID
    skill_name: str
    skill_version_id: uuid.UUID | None
    trigger: str
    job_id: str | None


async def insert_activations(conn: asyncpg.Connection, rows: Sequence[ActivationRow]) -> None:
    """One statement for a whole batch; telemetry, so it does not wait for the WAL flush."""
    async with conn.transaction():
        await set_local_async_commit(conn)
        await conn.execute(
            INSERT_ACTIVATIONS,
            [r.organization_id for r in rows],
            [r.skill_name for r in rows],
            [r.skill_version_id for r in rows],
            [r.trigger for r in rows],
            [r.job_id for r in rows],
        )
