"""The dead-letter table as the turn's `DeadLetters`: what a turn could not do, kept for an
operator and the org's admins (written through a narrow function, skillet_record_dead_letter)."""

from __future__ import annotations

import uuid
from typing import Any

import structlog

from jobs.queries import insert_dead_letter

log = structlog.get_logger(__name__)


class DatabaseDeadLetters:
    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def record(
        self, *, organization_id: uuid.UUID, function: str, payload: Any, code: str, error: str
    ) -> None:
        job_id = str(structlog.contextvars.get_contextvars().get("job_id", ""))
        async with self._pool.acquire() as conn:
            await insert_dead_letter(
                conn,
                job_id=job_id,
                function=function,
                payload=payload,
                error_code=code,
                error=error,
                tries=1,
                organization_id=organization_id,
            )
        log.warning("job.dead_lettered", function=function, code=code)
