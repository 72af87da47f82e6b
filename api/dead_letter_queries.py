"""SQL of an org's dead letters: list, lock one for a requeue, stamp it requeued.

Rows whose payload named no valid org (organization_id null) are never an org's: they stay
with operators (`skillet status`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg


@dataclass(frozen=True)
class DeadLetter:
    id: int
    job_id: str
    function: str
    error_code: str
    error: str
    tries: int
    created_at: datetime
    requeued_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "job_id": self.job_id,
            "function": self.function,
            "error_code": self.error_code,
            "error": self.error,
            "tries": self.tries,
            "created_at": self.created_at.isoformat(),
            "requeued_at": None if self.requeued_at is None else self.requeued_at.isoformat(),
        }


_COLUMNS = "id, job_id, function, error_code, error, tries, created_at, requeued_at"

LIST_DEAD_LETTERS = f"""
select {_COLUMNS} from dead_letters
where organization_id = $1 and ($2::bigint is null or id < $2)
order by id desc
limit $3
"""


async def list_dead_letters(
    conn: asyncpg.Connection, organization_id: uuid.UUID, *, before_id: int | None, limit: int
) -> list[DeadLetter]:
    """Newest first; `before_id` the last id seen."""
    rows = await conn.fetch(LIST_DEAD_LETTERS, organization_id, before_id, limit)
    return [DeadLetter(**dict(r)) for r in rows]


LOCK_DEAD_LETTER = f"""
select {_COLUMNS}, payload from dead_letters
where organization_id = $1 and id = $2
for update
"""


async def lock_dead_letter(
    conn: asyncpg.Connection, organization_id: uuid.UUID, dead_letter_id: int
) -> tuple[DeadLetter, Any] | None:
    """The row and its job payload, locked until the caller's transaction ends."""
    row = await conn.fetchrow(LOCK_DEAD_LETTER, organization_id, dead_letter_id)
    if row is None:
        return None
    values = dict(row)
    payload = values.pop("payload")
    return DeadLetter(**values), payload


UPDATE_DEAD_LETTER_REQUEUED = """
update dead_letters set requeued_at = now()
where organization_id = $1 and id = $2
returning requeued_at
"""


async def update_dead_letter_requeued(
    conn: asyncpg.Connection, organization_id: uuid.UUID, dead_letter_id: int
) -> datetime:
    stamp: datetime = await conn.fetchval(
        UPDATE_DEAD_LETTER_REQUEUED, organization_id, dead_letter_id
    )
    return stamp
