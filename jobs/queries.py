"""SQL of the job layer: the dead-letter table, and whose conversation a message id is in."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

# Dead letters span orgs (and payloads of no org): one narrow function (skillet_record_dead_letter).
INSERT_DEAD_LETTER = "select skillet_record_dead_letter($1, $2, $3, $4, $5, $6, $7)"


async def insert_dead_letter(
    conn: asyncpg.Connection,
    *,
    job_id: str,
    function: str,
    payload: Any,
    error_code: str,
    error: str,
    tries: int,
    organization_id: uuid.UUID | None = None,
) -> None:
    """`organization_id`: the org of a payload that validated (its admin API lists the row);
    None when the payload could not be read, which leaves the row to operators."""
    await conn.execute(
        INSERT_DEAD_LETTER,
        job_id,
        function,
        payload,
        error_code,
        error[:2000],
        tries,
        organization_id,
    )
