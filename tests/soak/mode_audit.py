"""A DB-side audit of the soak's conversations: every change of mode and every agent reply,
each stamped at its commit, so the soak can count agent replies committed while a person
held the conversation (`agent_replies_while_human`).

Installed by the soak on its database for the run and dropped after (the suite's database is
shared with other tests). Both triggers are deferred constraint triggers: they run as their
transaction commits and take a number from one sequence then, so the numbers follow the
commit order of a takeover and an agent reply, which the product serializes on the
conversation row. Timestamps would not do: `now()` is a transaction's start, and a takeover
that waited for the row lock starts before the agent reply it comes after.
"""

from __future__ import annotations

import uuid

import asyncpg

INSTALL = """
create sequence soak_commit_seq;
create table soak_mode_log (
    seq bigint not null, conversation_id uuid not null, organization_id uuid not null,
    mode text not null, held_by text null
);
create table soak_agent_commits (
    seq bigint not null, conversation_id uuid not null, organization_id uuid not null,
    message_id uuid not null
);
create function soak_log_mode() returns trigger language plpgsql security definer
set search_path = public as $$
begin
    insert into soak_mode_log values (nextval('soak_commit_seq'), new.id, new.organization_id,
                                      new.mode, new.held_by);
    return null;
end;
$$;
create function soak_log_agent_commit() returns trigger language plpgsql security definer
set search_path = public as $$
begin
    insert into soak_agent_commits values (nextval('soak_commit_seq'), new.conversation_id,
                                           new.organization_id, new.id);
    return null;
end;
$$;
create constraint trigger soak_mode_changes after update on conversations
    deferrable initially deferred for each row
    when (old.mode is distinct from new.mode or old.held_by is distinct from new.held_by)
    execute function soak_log_mode();
create constraint trigger soak_agent_replies after insert on messages
    deferrable initially deferred for each row
    when (new.direction = 'outbound' and new.author = 'agent')
    execute function soak_log_agent_commit();
"""

UNINSTALL = """
drop trigger if exists soak_agent_replies on messages;
drop trigger if exists soak_mode_changes on conversations;
drop function if exists soak_log_agent_commit();
drop function if exists soak_log_mode();
drop table if exists soak_agent_commits;
drop table if exists soak_mode_log;
drop sequence if exists soak_commit_seq;
"""

# An agent reply is inside a held interval when the conversation's last mode change
# committed before it put a person in (mode 'human').
AGENT_REPLIES_WHILE_HUMAN = """
select count(*) from soak_agent_commits a
where a.organization_id = $1
  and (select l.mode from soak_mode_log l
       where l.conversation_id = a.conversation_id and l.seq < a.seq
       order by l.seq desc limit 1) = 'human'
"""

MODE_CHANGES = """
select count(*) filter (where mode = 'human') as takeovers,
       count(*) filter (where mode = 'agent') as releases
from soak_mode_log where organization_id = $1
"""


async def install(conn: asyncpg.Connection) -> None:
    """On the schema owner's connection (the trigger functions run as their owner)."""
    async with conn.transaction():
        await conn.execute(UNINSTALL)  # a run that died before its cleanup
        await conn.execute(INSTALL)


async def uninstall(conn: asyncpg.Connection) -> None:
    await conn.execute(UNINSTALL)


async def agent_replies_while_human(conn: asyncpg.Connection, org: uuid.UUID) -> int:
    return int(await conn.fetchval(AGENT_REPLIES_WHILE_HUMAN, org))


async def mode_changes(conn: asyncpg.Connection, org: uuid.UUID) -> tuple[int, int]:
    """(changes to 'human', changes back to 'agent') committed for the org's conversations."""
    row = await conn.fetchrow(MODE_CHANGES, org)
    assert row is not None
    return int(row["takeovers"]), int(row["releases"])
