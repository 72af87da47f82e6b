"""SQL of follow-ups: a template the agent scheduled (schedule_followup), listed and
cancelled by a person, and sent by the cron (skillet_fire_due_followups, jobs.followup_tick).

A follow-up is decided once: the cron locks it and marks it sent (with its outbox row) or
skipped in one statement; a cancel only moves a still scheduled one. The cap (scheduled
ones per conversation) is checked under the conversation's row lock, so two turns cannot
both pass it. The caller owns the transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

LOCK_CONVERSATION = "select contact_id from conversations where id = $1 for update"

COUNT_SCHEDULED = """
select count(*) from followups where conversation_id = $1 and status = 'scheduled'
"""

INSERT_FOLLOWUP = """
insert into followups (organization_id, conversation_id, due_at, template_name,
                       template_language, params, placeholders, body, channel_id)
values ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9)
returning id
"""


@dataclass(frozen=True)
class NewFollowup:
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    due_at: datetime
    template_name: str
    template_language: str
    params: Sequence[str]
    placeholders: Sequence[str]
    body: str  # the template's body filled in, as the customer will read it
    channel_id: uuid.UUID | None = None  # the number whose template it is


async def lock_conversation_contact(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> str | None:
    """Lock the conversation's row (serializes the cap check); its contact id."""
    contact: str | None = await conn.fetchval(LOCK_CONVERSATION, conversation_id)
    return contact


async def count_scheduled(conn: asyncpg.Connection, conversation_id: uuid.UUID) -> int:
    count: int = await conn.fetchval(COUNT_SCHEDULED, conversation_id)
    return count


async def insert_followup(conn: asyncpg.Connection, new: NewFollowup) -> uuid.UUID:
    followup_id: uuid.UUID = await conn.fetchval(
        INSERT_FOLLOWUP,
        new.organization_id,
        new.conversation_id,
        new.due_at,
        new.template_name,
        new.template_language,
        list(new.params),  # jsonb: the pool's codec encodes
        list(new.placeholders),
        new.body,
        new.channel_id,
    )
    return followup_id


@dataclass(frozen=True)
class Followup:
    id: uuid.UUID
    conversation_id: uuid.UUID
    due_at: datetime
    template_name: str
    template_language: str
    params: tuple[str, ...]
    body: str
    status: str  # scheduled | sent | skipped | cancelled
    status_reason: str | None
    created_at: datetime
    decided_at: datetime | None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "conversation_id": str(self.conversation_id),
            "at": self.due_at.isoformat(),
            "template": self.template_name,
            "language": self.template_language,
            "params": list(self.params),
            "body": self.body,
            "status": self.status,
            "reason": self.status_reason,
            "created_at": self.created_at.isoformat(),
            "decided_at": None if self.decided_at is None else self.decided_at.isoformat(),
        }


_COLUMNS = """id, conversation_id, due_at, template_name, template_language, params, body,
    status, status_reason, created_at, decided_at"""


def _followup(row: asyncpg.Record) -> Followup:
    values = dict(row)
    params = values["params"]
    values["params"] = tuple(json.loads(params) if isinstance(params, str) else params)
    return Followup(**values)


LIST_FOLLOWUPS = f"""
select {_COLUMNS} from followups
where conversation_id = $1
order by (status = 'scheduled') desc, due_at, id
limit $2
"""


async def list_followups(
    conn: asyncpg.Connection, conversation_id: uuid.UUID, *, limit: int = 50
) -> list[Followup]:
    """Scheduled ones first (soonest first), then the decided ones."""
    return [_followup(r) for r in await conn.fetch(LIST_FOLLOWUPS, conversation_id, limit)]


CANCEL_FOLLOWUP = f"""
update followups set status = 'cancelled', status_reason = $3, decided_at = now()
where id = $1 and conversation_id = $2 and status = 'scheduled'
returning {_COLUMNS}
"""
FETCH_FOLLOWUP = f"select {_COLUMNS} from followups where id = $1 and conversation_id = $2"


async def cancel_followup(
    conn: asyncpg.Connection, conversation_id: uuid.UUID, followup_id: uuid.UUID, by: str
) -> tuple[Followup | None, bool]:
    """(the follow-up, whether this call cancelled it); (None, False) when unknown. One
    already sent, skipped or cancelled stays as it is."""
    row = await conn.fetchrow(CANCEL_FOLLOWUP, followup_id, conversation_id, by[:200])
    if row is not None:
        return _followup(row), True
    row = await conn.fetchrow(FETCH_FOLLOWUP, followup_id, conversation_id)
    return (None if row is None else _followup(row)), False


FIRE_DUE_FOLLOWUPS = """
select organization_id, conversation_id, followup_id, status, reason
from skillet_fire_due_followups($1)
"""


@dataclass(frozen=True)
class FiredFollowup:
    organization_id: uuid.UUID
    conversation_id: uuid.UUID
    followup_id: uuid.UUID
    status: str  # sent | skipped
    reason: str | None  # customer_wrote | opted_out | person_holds | template_unavailable


async def fire_due_followups(conn: asyncpg.Connection, limit: int) -> list[FiredFollowup]:
    """Across orgs (the worker's cron): decide each due follow-up once."""
    return [FiredFollowup(**dict(r)) for r in await conn.fetch(FIRE_DUE_FOLLOWUPS, limit)]
