"""SQL of the job layer: the dead-letter table."""

from __future__ import annotations

from typing import Any

import asyncpg

INSERT_DEAD_LETTER = """
insert into dead_letters (job_id, function, payload, error_code, error, tries)
values ($1, $2, $3, $4, $5, $6)
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
) -> None:
    await conn.execute(
        INSERT_DEAD_LETTER, job_id, function, payload, error_code, error[:2000], tries
    )
