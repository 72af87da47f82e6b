"""SQL of what happened in an org: conversations and their messages, curator reports."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

FETCH_CONVERSATION_EXISTS = """
select exists (select 1 from conversations where organization_id = $1 and id = $2)
"""


async def fetch_conversation_exists(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> bool:
    return bool(await conn.fetchval(FETCH_CONVERSATION_EXISTS, organization_id, conversation_id))


@dataclass(frozen=True)
class MessageRow:
    id: uuid.UUID
    direction: str
    kind: str
    body: str
    external_id: str | None
    sent_at: datetime | None
    received_at: datetime | None
    created_at: datetime
    reply_to_id: uuid.UUID | None
    answered_by: uuid.UUID | None
    # A reply's delivery: its outbox row's (pending, failed when the send was refused), else
    # what its receipts say (sent, delivered, read, failed), see RECEIPT_OF_TEXT.
    delivery_status: str | None
    delivery_error: str | None
    author: str | None  # an outbound message's: 'agent' | 'person' | 'phone'
    author_key_prefix: str | None  # a person's API key
    skills: Any  # an agent reply's skills: [{name, version_id}] (json text), or None
    # A customer's stored media (conversation.media): its sniffed type.
    media_type: str | None = None
    media_stored: bool = False  # its bytes are still stored (retention deletes them)
    # An agent reply's skill files (send_skill_file), json text: [{filename, kind, status}].
    files: str | None = None
    # The choices sent after it (send_choices, satisfaction), json text: {text, choices, status}.
    choices: str | None = None
    # A person's reply (author_key_prefix `person:<id>`): the person's id and name.
    author_person_id: uuid.UUID | None = None
    author_person_name: str | None = None
    # The message it quotes (the customer swiped to reply): the provider's id, ours when it is
    # one of the conversation's, and its text (ours, else what the provider said).
    quote_external_id: str | None = None
    quote_id: uuid.UUID | None = None
    quote_text: str | None = None
    # Customers' reactions to it, json text: [{emoji, from, at}], the latest per sender.
    reactions: str | None = None


# What the provider said of one outbox row (a reply's text, or one of its files): the text may
# have gone out as several messages (a long text split), one receipt each. Any failed one
# fails it; else the least advanced counts (a receipt still `accepted` reads `sent`).
# Bounded: at most RECEIPTS_READ per outbox row. Read only for a row sent (`on`).
RECEIPTS_READ = 16


def receipt_of(outbox: str, alias: str) -> str:
    """A lateral join giving `alias.status` and `alias.error` for the outbox row `outbox`."""
    return f"""
left join lateral (
    select case when bool_or(r.status = 'failed') then 'failed'
                else (array['sent', 'sent', 'delivered', 'read'])[
                    min(skillet_receipt_rank(r.status)) + 1] end as status,
           min(r.error) filter (where r.status = 'failed') as error
    from (select status, error from outbox_receipts
          where organization_id = {outbox}.organization_id and outbox_id = {outbox}.id
          limit {RECEIPTS_READ}) r
) {alias} on {outbox}.status = 'sent'
"""


# Oldest first (a conversation reads top to bottom); keyset (created_at, id).
LIST_MESSAGES = f"""
select m.id, m.direction, m.kind, m.body, m.external_id, m.sent_at, m.received_at,
       m.created_at, m.reply_to_id, m.answered_by,
       coalesce(rc.status, o.status) as delivery_status,
       coalesce(o.last_error, rc.error) as delivery_error,
       m.author, m.author_key_prefix, m.skills::text as skills,
       m.media_type, m.media_key is not null as media_stored,
       (select json_agg(json_build_object('filename', f.file ->> 'filename',
                                          'kind', f.file ->> 'kind',
                                          'status', coalesce(fr.status, f.status))
                        order by f.part)::text
        from outbox f {receipt_of("f", "fr")}
        where f.message_id = m.id and f.part > 0 and f.file is not null) as files,
       (select json_build_object('text', c.body, 'choices', c.choices -> 'choices',
                                 'status', c.status)::text
        from outbox c where c.message_id = m.id and c.choices is not null
        order by c.part limit 1) as choices,
       ap.id as author_person_id, ap.name as author_person_name,
       m.quote_external_id, m.quote_id,
       case when m.quote_external_id is not null
            then coalesce((select q.body from messages q where q.id = m.quote_id), m.quote_text)
       end as quote_text,
       (select json_agg(json_build_object('emoji', r.emoji, 'from', r.sender,
                                          'at', r.reacted_at) order by r.reacted_at, r.sender)::text
        from message_reactions r where r.target_id = m.id and r.emoji <> '') as reactions
from messages m
left join outbox o on o.message_id = m.id and o.part = 0  -- the text part: one row each
{receipt_of("o", "rc")}left join people ap on m.author_key_prefix like 'person:%'
    and ap.organization_id = m.organization_id and 'person:' || ap.id::text = m.author_key_prefix
where m.organization_id = $1 and m.conversation_id = $2
  and ($3::timestamptz is null or (m.created_at, m.id) > ($3, $4))
order by m.created_at, m.id
limit $5
"""


async def list_messages(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    *,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[MessageRow]:
    at, last_id = after if after is not None else (None, None)
    rows = await conn.fetch(LIST_MESSAGES, organization_id, conversation_id, at, last_id, limit)
    return [MessageRow(**dict(r)) for r in rows]


@dataclass(frozen=True)
class CuratorRunRow:
    id: int
    trigger: str
    ran_at: datetime
    replayed: bool
    transitioned: Any  # [{name, from, to}]
    skipped: Any  # [{name, reason}]
    consolidation: Any  # what consolidation did after the pass (consolidation.run)


# Newest first; keyset id. `json` columns come back as text: decoded by the caller.
LIST_CURATOR_RUNS = """
select id, trigger, ran_at, replayed, transitioned::jsonb as transitioned,
       skipped::jsonb as skipped, consolidation
from curator_runs
where organization_id = $1 and ($2::bigint is null or id < $2)
order by id desc
limit $3
"""


async def list_curator_runs(
    conn: asyncpg.Connection, organization_id: uuid.UUID, *, before_id: int | None, limit: int
) -> list[CuratorRunRow]:
    rows = await conn.fetch(LIST_CURATOR_RUNS, organization_id, before_id, limit)
    return [CuratorRunRow(**dict(r)) for r in rows]
