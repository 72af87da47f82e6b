"""SQL of a number's WhatsApp templates (message_templates) and of which number a
conversation's messages leave from. The caller owns the transaction; the connection is bound
to the org (or is the owner's, for the CLI)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from channels.templates import Template

# Upsert the listing; with $4 (the listing is complete) drop what the WABA no longer has.
UPSERT_TEMPLATES = """
with listed as (
    select * from unnest($3::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
        as t(name, language, category, status, body, placeholders_json)
), upserted as (
    insert into message_templates as m (organization_id, channel_id, name, language, category,
                                        status, body, placeholders, synced_at)
    select $1, $2, l.name, l.language, l.category, l.status, l.body,
           array(select jsonb_array_elements_text(l.placeholders_json::jsonb)), now()
    from listed l
    on conflict (channel_id, name, language) do update set
        category = excluded.category, status = excluded.status, body = excluded.body,
        placeholders = excluded.placeholders, synced_at = now()
    returning 1
), dropped as (
    delete from message_templates m
    where $4 and m.channel_id = $2
      and not exists (select 1 from listed l where l.name = m.name and l.language = m.language)
    returning 1
)
select (select count(*) from upserted) as stored, (select count(*) from dropped) as dropped
"""


@dataclass(frozen=True)
class StoredTemplates:
    stored: int
    dropped: int


async def replace_templates(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    channel_id: uuid.UUID,
    templates: Sequence[Template],
    *,
    complete: bool,
) -> StoredTemplates:
    """Store a sync's listing; a complete one also drops the templates it no longer has."""
    row = await conn.fetchrow(
        UPSERT_TEMPLATES,
        organization_id,
        channel_id,
        [t.name for t in templates],
        complete,
        [t.language for t in templates],
        [t.category for t in templates],
        [t.status for t in templates],
        [t.body for t in templates],
        [json.dumps(list(t.placeholders)) for t in templates],
    )
    assert row is not None
    return StoredTemplates(row["stored"], row["dropped"])


LIST_TEMPLATES = """
select name, language, category, status, body, placeholders from message_templates
where channel_id = $1 and ($2::text is null or status = $2)
order by name, language
limit $3
"""


def _template(row: asyncpg.Record) -> Template:
    return Template(
        row["name"],
        row["language"],
        row["category"],
        row["status"],
        row["body"],
        tuple(row["placeholders"]),
    )


async def list_templates(
    conn: asyncpg.Connection,
    channel_id: uuid.UUID,
    *,
    status: str | None = None,
    limit: int = 1_000,
) -> list[Template]:
    rows = await conn.fetch(LIST_TEMPLATES, channel_id, status, limit)
    return [_template(r) for r in rows]


# Without a language: pt_BR first, then any approved one, then any.
FETCH_TEMPLATE = """
select name, language, category, status, body, placeholders from message_templates
where channel_id = $1 and name = $2 and ($3::text is null or language = $3)
order by (language = 'pt_BR') desc, (status = 'APPROVED') desc, language
limit 1
"""


async def fetch_template(
    conn: asyncpg.Connection, channel_id: uuid.UUID, name: str, language: str | None
) -> Template | None:
    row = await conn.fetchrow(FETCH_TEMPLATE, channel_id, name, language)
    return None if row is None else _template(row)


@dataclass(frozen=True)
class ConversationChannel:
    id: uuid.UUID
    kind: str  # 'cloud_api' | 'waha'
    address: str


# The number the conversation's messages leave from, as skillet_claim_outbox routes them:
# the one its customer's latest message came in on, else the org's only number.
FETCH_CONVERSATION_CHANNEL = """
select c.id, c.kind, c.address from (
    (select ch.id, ch.kind, ch.address, 0 as preference
     from messages m
     join inbound_routes r
       on r.organization_id = m.organization_id and r.external_id = m.external_id
     join channels ch on ch.id = r.channel_id
     where m.conversation_id = $1 and m.direction = 'inbound'
     order by coalesce(m.received_at, m.created_at) desc, m.id desc
     limit 1)
    union all
    select ch.id, ch.kind, ch.address, 1 from channels ch
    where ch.organization_id = (select organization_id from conversations where id = $1)
      and (select count(*) from channels o where o.organization_id = ch.organization_id) = 1
) c
order by c.preference
limit 1
"""


async def fetch_conversation_channel(
    conn: asyncpg.Connection, conversation_id: uuid.UUID
) -> ConversationChannel | None:
    row = await conn.fetchrow(FETCH_CONVERSATION_CHANNEL, conversation_id)
    return None if row is None else ConversationChannel(row["id"], row["kind"], row["address"])


# The owner's (the CLI's) read of a number's own token: the owner sees every org's rows, and
# binds none, so skillet_channel_secrets (for the bound org) has nothing to give it.
FETCH_OWN_TOKEN_AS_OWNER = "select access_token from channel_secrets where channel_id = $1"


async def fetch_own_token_as_owner(conn: asyncpg.Connection, channel_id: uuid.UUID) -> str | None:
    token: str | None = await conn.fetchval(FETCH_OWN_TOKEN_AS_OWNER, channel_id)
    return token
