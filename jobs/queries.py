"""SQL of the job layer: the dead-letter table."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

INSERT_DEAD_LETTER = """
insert into dead_letters (job_id, function, payload, error_code, error, tries, organization_id)
values ($1, $2, $3, $4, $5, $6, $7)
"""


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
