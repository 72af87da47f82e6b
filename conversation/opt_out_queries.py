"""SQL of the customer's opt-out: a PARAR / VOLTAR recorded once per message, with its one
confirmation committed as a reply (an outbox row the conversation's holder delivers).

The choice row is keyed by the customer's message, so a job that runs twice (or a holder
and a job that both see the message) records and confirms it once: the confirmation is
written only by the statement whose insert of the choice succeeded. The confirmation answers
no one message (reply_to_id null, like a person's reply or a notice: the holder does not let
go while it is undelivered) and leaves from the number the customer wrote to (route_via_id);
it marks the customer's word answered, so neither the agent nor a person's queue sees it. The
caller owns the transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import asyncpg

from conversation.opt_out import MAX_CHOICE_CHARS, OptChoice

LOCK_CHOICE_MESSAGE = """
select c.id as conversation_id, c.contact_id, c.channel
from messages m join conversations c on c.id = m.conversation_id
where m.id = $1 and m.direction = 'inbound'
for update of c
"""

INSERT_CHOICE = """
insert into contact_opt_choices (organization_id, contact_id, choice, message_id)
values ($1, $2, $3, $4)
on conflict (message_id) do nothing
returning id
"""

INSERT_CONFIRMATION = """
with reply as (
    insert into messages (organization_id, conversation_id, direction, channel, body, author,
                          route_via_id, created_at)
    values ($1, $2, 'outbound', $3, $4, 'agent', $5, clock_timestamp())
    returning id
), answered as (
    update messages m set answered_by = reply.id
    from reply
    where m.id = $5 and m.answered_by is null
), queued as (
    insert into outbox (organization_id, conversation_id, message_id, body)
    select $1, $2, reply.id, $4 from reply
)
select id from reply
"""

UPDATE_CHOICE_CONFIRMED = "update contact_opt_choices set confirmation_id = $2 where id = $1"


async def record_choice(
    conn: asyncpg.Connection,
    organization_id: uuid.UUID,
    message_id: uuid.UUID,
    choice: OptChoice,
    confirmation: str,
) -> bool:
    """Record the customer's choice made by `message_id` and commit its confirmation; False
    when that message's choice was recorded before (nothing written)."""
    async with conn.transaction():
        target = await conn.fetchrow(LOCK_CHOICE_MESSAGE, message_id)
        if target is None:
            return False
        choice_id = await conn.fetchval(
            INSERT_CHOICE, organization_id, target["contact_id"], choice, message_id
        )
        if choice_id is None:
            return False
        reply_id = await conn.fetchval(
            INSERT_CONFIRMATION,
            organization_id,
            target["conversation_id"],
            target["channel"],
            confirmation,
            message_id,
        )
        await conn.execute(UPDATE_CHOICE_CONFIRMED, choice_id, reply_id)
    return True


# Only what the word check needs: a message longer than the cap is never a choice.
FETCH_CHOICE_CANDIDATE = f"""
select left(m.body, {MAX_CHOICE_CHARS + 1}) as head,
       exists (select 1 from contact_opt_choices o where o.message_id = m.id) as recorded
from messages m
where m.id = $1 and m.direction = 'inbound'
"""


@dataclass(frozen=True)
class ChoiceCandidate:
    head: str  # the message's first MAX_CHOICE_CHARS + 1 characters
    recorded: bool  # its choice is recorded already


async def fetch_choice_candidate(
    conn: asyncpg.Connection, message_id: uuid.UUID
) -> ChoiceCandidate | None:
    row = await conn.fetchrow(FETCH_CHOICE_CANDIDATE, message_id)
    return None if row is None else ChoiceCandidate(row["head"], row["recorded"])


FETCH_OPTED_OUT = "select skillet_contact_opted_out($1, $2)"


async def fetch_opted_out(
    conn: asyncpg.Connection, organization_id: uuid.UUID, contact_id: str
) -> bool:
    """Whether the contact's latest choice is 'out' (no template, no follow-up)."""
    found: bool = await conn.fetchval(FETCH_OPTED_OUT, organization_id, contact_id)
    return found
