"""SQL of what the console tells a signed-in person about (api.console.notices): the
conversations waiting for a person, those the person holds with a customer message no one
answered, and those passed to the person they have not answered yet.

One statement, bounded: at most NOTICES_PER_KIND of each kind, the latest customer message
per held conversation through its index, and transfers only among the org's last
AUDIT_ROWS_READ audit rows. Tenant-scoped by the connection's binding and by the org's id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

NOTICES_PER_KIND = 50
AUDIT_ROWS_READ = 500


@dataclass(frozen=True)
class NoticeRow:
    conversation_id: uuid.UUID
    contact_id: str
    contact_name: str | None  # the customer's WhatsApp profile name, when one was carried
    kind: str  # 'waiting' | 'message' | 'transfer'
    at: datetime  # what changes when there is something new of this kind
    # Something to tell (sound, notification) when new, not only to count: a customer's
    # message that came while the person holds it, never one they found when taking it.
    told: bool = True


LIST_NOTICES = f"""
(select c.id as conversation_id, c.contact_id, c.contact_name, 'waiting' as kind,
        c.mode_since as at, true as told
 from conversations c
 where c.organization_id = $1 and c.mode = 'waiting' and c.mode_since is not null
 order by c.mode_since desc
 limit {NOTICES_PER_KIND})
union all
(select c.id, c.contact_id, c.contact_name, 'message', last_in.created_at,
        last_in.created_at > c.mode_since
 from (select id, contact_id, contact_name, mode_since from conversations
       where organization_id = $1 and mode = 'human' and held_by = $2
       order by mode_since desc limit {NOTICES_PER_KIND}) c
 join lateral (
     select u.created_at from messages u
     where u.conversation_id = c.id and u.direction = 'inbound'
       and u.answered_by is null and u.context_at is null
     order by u.created_at desc limit 1
 ) last_in on true)
union all
(select c.id, c.contact_id, c.contact_name, 'transfer', t.at, true
 from (select distinct on (a.detail ->> 'conversation_id')
              a.detail ->> 'conversation_id' as conversation_id, a.created_at as at
       from (select action, detail, created_at, id from audit_log
             where organization_id = $1 order by id desc limit {AUDIT_ROWS_READ}) a
       where a.action = 'conversation.transfer' and a.detail ->> 'to' = $2
       order by a.detail ->> 'conversation_id', a.id desc) t
 join conversations c on c.organization_id = $1 and c.id::text = t.conversation_id
 where c.mode = 'human' and c.held_by = $2
   and t.at > coalesce(c.person_replied_at, '-infinity'::timestamptz)
 limit {NOTICES_PER_KIND})
"""


async def list_notices(
    conn: asyncpg.Connection, organization_id: uuid.UUID, actor: str
) -> list[NoticeRow]:
    """What `actor` (a key's prefix or `person:<id>`) should be told about now."""
    rows = await conn.fetch(LIST_NOTICES, organization_id, actor)
    return [NoticeRow(**dict(r)) for r in rows]
