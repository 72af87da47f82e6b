"""Read-only SQL for reports (demo transcript, status): replies and activation rows per org."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

LIST_REPLIES = """
select i.external_id, i.body as inbound, r.id as reply_id, r.body as reply,
       o.status as outbox_status
from messages i
left join messages r on r.id = i.answered_by
left join outbox o on o.message_id = r.id and o.part = 0
where i.organization_id = $1 and i.direction = 'inbound'
order by i.created_at, i.id
"""


@dataclass(frozen=True)
class ReplyRow:
    external_id: str
    inbound: str
    reply_id: uuid.UUID | None
    reply: str | None
    outbox_status: str | None


async def list_replies(conn: asyncpg.Connection, organization_id: uuid.UUID) -> list[ReplyRow]:
    rows = await conn.fetch(LIST_REPLIES, organization_id)
    return [ReplyRow(**dict(r)) for r in rows]


LIST_ACTIVATIONS = """
select skill_name, skill_version_id, trigger, job_id, created_at
from skill_activations where organization_id = $1
order by id
"""


@dataclass(frozen=True)
class ActivationRecord:
    skill_name: str
    skill_version_id: uuid.UUID | None
    trigger: str
    job_id: str | None
    created_at: datetime


async def list_activations(
    conn: asyncpg.Connection, organization_id: uuid.UUID
) -> list[ActivationRecord]:
    rows = await conn.fetch(LIST_ACTIVATIONS, organization_id)
    return [ActivationRecord(**dict(r)) for r in rows]
