"""SQL of a conversation's mode in the API: who holds it, the list and one conversation with
their last message, a takeover, a release and a person's reply.

Every change of mode locks the conversation row first (`lock_conversation`), as the turn's
reply commit does (skillet_commit_turn), so the two are serialized: a takeover either comes
after a committed agent reply or stops it (outcome taken_over). The caller owns the
transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from conversation.mode import Transition
from conversation.mode_queries import change_mode
from delivery.outbox_queries import OutboxTemplate

# How much of the last message a list item shows.
LAST_MESSAGE_CHARS = 200


@dataclass(frozen=True)
class ConversationView:
    id: uuid.UUID
    channel: str
    contact_id: str
    created_at: datetime
    mode: str  # 'agent' | 'waiting' | 'human'
    held_by: str | None  # an API key's prefix, `person:<id>`, or 'phone'
    mode_since: datetime | None
    mode_reason: str | None
    mode_cause: str | None  # 'tool' | 'customer' | 'phone' | 'console'
    last_message_at: datetime | None
    last_body: str | None  # its first LAST_MESSAGE_CHARS characters
    last_author: str | None  # 'customer' | 'agent' | 'person' | 'phone'
    unanswered: int  # customer messages no one answered (nor kept as context)
    # When the contact opted out of templates and follow-ups (PARAR); None: it has not.
    opted_out_at: datetime | None = None
    # The person who holds it (held_by `person:<id>`), with their name.
    held_by_person_id: uuid.UUID | None = None
    held_by_person_name: str | None = None
    # The customer's WhatsApp profile name, the latest a delivery carried (None: none yet).
    contact_name: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The API's and the CLI's shape of a conversation."""
        last = None
        if self.last_message_at is not None:
            last = {
                "body": self.last_body,
                "author": self.last_author,
                "at": _stamp(self.last_message_at),
            }
        return {
            "id": str(self.id),
            "channel": self.channel,
            "contact_id": self.contact_id,
            "contact_name": self.contact_name,
            "created_at": self.created_at.isoformat(),
            "last_message_at": _stamp(self.last_message_at),
            "mode": self.mode,
            "held_by": self.held_by,
            "held_by_person": None
            if self.held_by_person_id is None
            else {"id": str(self.held_by_person_id), "name": self.held_by_person_name},
            "mode_since": _stamp(self.mode_since),
            "mode_reason": self.mode_reason,
            "mode_cause": self.mode_cause,
            "last_message": last,
            "unanswered": self.unanswered,
            "opted_out": self.opted_out_at is not None,
            "opted_out_at": _stamp(self.opted_out_at),
        }


def _stamp(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


_VIEW = f"""
select c.id, c.channel, c.contact_id, c.created_at, c.mode, c.held_by, c.mode_since,
       c.mode_reason, c.mode_cause,
       last.created_at as last_message_at, left(last.body, {LAST_MESSAGE_CHARS}) as last_body,
       case when last.direction = 'inbound' then 'customer'
            when last.direction is not null then coalesce(last.author, 'agent') end
           as last_author,
       (select count(*) from messages u
        where u.conversation_id = c.id and u.direction = 'inbound'
          and u.answered_by is null and u.context_at is null) as unanswered,
       case when opt.choice = 'out' then opt.created_at end as opted_out_at,
       hp.id as held_by_person_id, hp.name as held_by_person_name, c.contact_name
from conversations c
left join people hp on c.held_by like 'person:%'
    and hp.organization_id = c.organization_id and 'person:' || hp.id::text = c.held_by
left join lateral (
    select o.choice, o.created_at from contact_opt_choices o
    where o.organization_id = c.organization_id and o.contact_id = c.contact_id
    order by o.created_at desc, o.id desc limit 1
) opt on true
left join lateral (
    select m.body, m.direction, m.author, m.created_at from messages m
    where m.conversation_id = c.id order by m.created_at desc, m.id desc limit 1
) last on true
"""


@dataclass(frozen=True)
class ConversationFilter:
    """What the list keeps (all of it: each set field narrows it)."""

    mode: str | None = None
    held_by: str | None = None  # an exact holder: `person:<id>`, a key's prefix, 'phone'
    unanswered: bool = False  # only those with customer messages no one answered
    # A literal, accent-blind regular expression (conversation.search) over the name and
    # what customers wrote, and a LIKE pattern over the number (None: the text is no number).
    text_pattern: str | None = None
    number_pattern: str | None = None


# Search bounds: what customers wrote is read in the org's newest SEARCH_MESSAGES customer
# messages (the inbound index, newest first), each in its first SEARCH_CHARS characters; the
# name and the number in every conversation of the org (short columns).
SEARCH_MESSAGES = 20_000
SEARCH_CHARS = 2_000

_HITS = f"""
with hits as (
    select h.id from conversations h
    where $6::text is not null and h.organization_id = $1
      and (h.contact_name ~* $6 or h.contact_id like $7)
    union
    select r.conversation_id from (
        select m.conversation_id, m.body from messages m
        where $6::text is not null and m.organization_id = $1 and m.direction = 'inbound'
        order by m.created_at desc
        limit {SEARCH_MESSAGES}
    ) r
    where left(r.body, {SEARCH_CHARS}) ~* $6
)
"""
_FILTERS = """
where c.organization_id = $1 and ($2::text is null or c.mode = $2)
  and ($3::text is null or c.held_by = $3)
  and (not $4::boolean or exists (
        select 1 from messages u
        where u.conversation_id = c.id and u.direction = 'inbound'
          and u.answered_by is null and u.context_at is null))
  and ($5::boolean is false or c.id in (select id from hits))
"""

# Newest first; keyset (created_at, id) of the last row seen.
LIST_CONVERSATIONS = f"""{_HITS}{_VIEW}{_FILTERS}
  and ($8::timestamptz is null or (c.created_at, c.id) < ($8, $9))
order by c.created_at desc, c.id desc
limit $10
"""

# The waiting queue: oldest handoff first; keyset (mode_since, id).
LIST_WAITING = f"""{_HITS}{_VIEW}{_FILTERS}
  and ($8::timestamptz is null or (c.mode_since, c.id) > ($8, $9))
order by c.mode_since, c.id
limit $10
"""


async def list_conversation_views(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    *,
    mode: str | None,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
    where: ConversationFilter | None = None,
) -> list[ConversationView]:
    """Newest first, or for mode 'waiting' the longest waiting first; `after` is the keyset
    of the last row seen in that order; `where` narrows it (its mode is `mode`)."""
    at, last_id = after if after is not None else (None, None)
    f = where or ConversationFilter()
    query = LIST_WAITING if mode == "waiting" else LIST_CONVERSATIONS
    rows = await conn.fetch(
        query,
        organization_id,
        mode,
        f.held_by,
        f.unanswered,
        f.text_pattern is not None,
        f.text_pattern,
        f.number_pattern,
        at,
        last_id,
        limit,
    )
    return [ConversationView(**dict(r)) for r in rows]


FETCH_CONVERSATION_VIEW = f"{_VIEW} where c.organization_id = $1 and c.id = $2"


async def fetch_conversation_view(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> ConversationView | None:
    row = await conn.fetchrow(FETCH_CONVERSATION_VIEW, organization_id, conversation_id)
    return None if row is None else ConversationView(**dict(row))


@dataclass(frozen=True)
class ModeLock:
    """The conversation's mode, locked for the transaction."""

    mode: str
    held_by: str | None
    channel: str
    handoff_at: datetime | None
    person_replied_at: datetime | None
    contact_id: str = ""


LOCK_CONVERSATION = """
select mode, held_by, channel, handoff_at, person_replied_at, contact_id from conversations
where organization_id = $1 and id = $2
for update
"""


async def lock_conversation(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> ModeLock | None:
    row = await conn.fetchrow(LOCK_CONVERSATION, organization_id, conversation_id)
    return None if row is None else ModeLock(**dict(row))


async def update_taken_over(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    held_by: str,
    *,
    replied: bool,
) -> None:
    """A person holds it from now; a conversation the agent had counts as a handoff from the
    console (skillet_change_mode's 'take'). The org is the connection's binding."""
    del organization_id  # bound on the connection; the function reads under it
    await change_mode(
        conn,
        conversation_id,
        Transition.TAKE,
        held_by=held_by,
        cause="console",
        reason="assumida por uma pessoa",
        replied=replied,
    )


COUNT_PENDING = """
select count(*) from messages
where organization_id = $1 and conversation_id = $2 and direction = 'inbound'
  and answered_by is null and context_at is null
"""


async def update_released(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    *,
    answer_pending: bool,
) -> int:
    """Back to the agent (skillet_change_mode's 'release'); the customer messages it will
    answer (0 unless `answer_pending`: else they are kept as context, never answered)."""
    await change_mode(conn, conversation_id, Transition.RELEASE, keep_pending=not answer_pending)
    if not answer_pending:
        return 0
    count: int = await conn.fetchval(COUNT_PENDING, organization_id, conversation_id)
    return count


@dataclass(frozen=True)
class LastInbound:
    id: uuid.UUID
    sent_at: datetime | None
    routed: bool  # its reply leaves through a WhatsApp number (24-hour rule applies)


FETCH_LAST_INBOUND = """
select m.id, coalesce(m.sent_at, m.received_at, m.created_at) as sent_at,
       exists (select 1 from inbound_routes r
               where r.organization_id = m.organization_id and r.external_id = m.external_id)
       or (select count(*) from channels ch where ch.organization_id = m.organization_id) = 1
           as routed
from messages m
where m.organization_id = $1 and m.conversation_id = $2 and m.direction = 'inbound'
order by coalesce(m.received_at, m.created_at) desc, m.id desc
limit 1
"""


async def fetch_last_inbound(
    conn: asyncpg.Connection, organization_id: uuid.UUID, conversation_id: uuid.UUID
) -> LastInbound | None:
    row = await conn.fetchrow(FETCH_LAST_INBOUND, organization_id, conversation_id)
    return None if row is None else LastInbound(**dict(row))


@dataclass(frozen=True)
class PersonReply:
    message_id: uuid.UUID
    outbox_id: uuid.UUID
    created_at: datetime
    answered: int  # customer messages it answers


# clock_timestamp(), not now(): an agent reply committed while this transaction waited for
# the row lock has an earlier stamp, so the thread (and delivery) order is the commit order.
INSERT_PERSON_REPLY = """
with reply as (
    insert into messages (organization_id, conversation_id, direction, channel, body, author,
                          author_key_prefix, route_via_id, kind, created_at)
    values ($1, $2, 'outbound', $3, $4, 'person', $5, $6,
            case when $7::jsonb is null then 'text' else 'template' end, clock_timestamp())
    returning id, created_at
), answered as (
    update messages m set answered_by = reply.id
    from reply
    where m.organization_id = $1 and m.conversation_id = $2 and m.direction = 'inbound'
      and m.answered_by is null and m.context_at is null
    returning m.id
), queued as (
    insert into outbox (organization_id, conversation_id, message_id, body, template)
    select $1, $2, reply.id, $4, $7::jsonb from reply
    returning id
)
select reply.id as message_id, queued.id as outbox_id, reply.created_at,
       (select count(*) from answered) as answered
from reply, queued
"""


async def insert_person_reply(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    conversation_id: uuid.UUID,
    *,
    channel: str,
    body: str,
    key_prefix: str,
    route_via_id: uuid.UUID | None,
    template: OutboxTemplate | None = None,
) -> PersonReply:
    """The reply as an outbound message (author 'person'; kind 'template' with a template,
    `body` then being its filled body), answering every customer message no one answered,
    and its outbox row (pending: the woken holder delivers it)."""
    row = await conn.fetchrow(
        INSERT_PERSON_REPLY,
        organization_id,
        conversation_id,
        channel,
        body,
        key_prefix,
        route_via_id,
        None if template is None else template.as_json(),  # the pool's jsonb codec encodes
    )
    assert row is not None
    return PersonReply(**dict(row))
