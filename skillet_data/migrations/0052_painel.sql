-- Painel: the daily counts the console's panel (GET /v1/insights) reads, kept by triggers on
-- the rows every writer already goes through (a message stored; a conversation's mode or its
-- first person reply), so no turn, webhook or API code path changes. Days are the org's days:
-- the local date in its business-hours time zone (org_business_hours.timezone, default
-- America/Sao_Paulo) at the moment the count is written.
--   conversation_days        one row per conversation per day it had a message (kept for
--                            today and yesterday); with_person once a person (console, API,
--                            the owner's phone) wrote in it, answered it or it was handed to
--                            one that day: the mark that counts each once
--   conversation_daily       those counts per day: conversations, and those with a person
--   customer_message_daily   customer messages per quarter hour of the day (0-95): the panel
--                            judges each quarter open or closed by the business hours
--   handoff_daily            conversations handed to a person, per cause
--   reply_time_daily         a histogram of reply times: the agent's (its reply after the
--                            customer's last message of the burst) and people's first reply
--                            after a handoff; bucket b holds seconds in (1.25^(b-1), 1.25^b]
--                            (bucket 0: up to 1 s), so a percentile is read to about 12%
-- Counters are spread over 8 slots (by backend pid) so concurrent writers of an org rarely
-- wait on one row; readers sum the slots. Lock order, so two writers of one slot never wait on
-- each other in a cycle: an agent reply's reply_time_daily row (the turn's commit, before its
-- handoff), then conversation_daily (a conversation's day counted), then customer_message_daily,
-- handoff_daily or a person's reply_time_daily row; every trigger below takes them so.

create table conversation_days (
    organization_id uuid not null references organizations (id),
    day             date not null,
    conversation_id uuid not null,
    with_person     boolean not null default false,
    -- By conversation first: its older marks are found and let go (see below).
    primary key (organization_id, conversation_id, day)
);

create table conversation_daily (
    organization_id uuid not null references organizations (id),
    day             date not null,
    slot            smallint not null check (slot between 0 and 7),
    conversations   bigint not null default 0,
    with_person     bigint not null default 0,
    primary key (organization_id, day, slot)
);

create table customer_message_daily (
    organization_id uuid not null references organizations (id),
    day             date not null,
    quarter         smallint not null check (quarter between 0 and 95),
    slot            smallint not null check (slot between 0 and 7),
    messages        bigint not null default 0,
    primary key (organization_id, day, quarter, slot)
);

create table handoff_daily (
    organization_id uuid not null references organizations (id),
    day             date not null,
    cause           text not null check (cause in ('tool', 'customer', 'console', 'phone', '')),
    slot            smallint not null check (slot between 0 and 7),
    handoffs        bigint not null default 0,
    primary key (organization_id, day, cause, slot)
);

create table reply_time_daily (
    organization_id uuid not null references organizations (id),
    day             date not null,
    who             text not null check (who in ('agent', 'person')),
    bucket          smallint not null check (bucket between 0 and 63),
    slot            smallint not null check (slot between 0 and 7),
    replies         bigint not null default 0,
    primary key (organization_id, day, who, bucket, slot)
);

do $$
declare
    t text;
begin
    foreach t in array array['conversation_days', 'conversation_daily',
                             'customer_message_daily', 'handoff_daily', 'reply_time_daily'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format(
            'create policy tenant_isolation on %I
                 using (organization_id = (select skillet_current_org()))
                 with check (organization_id = (select skillet_current_org()))', t);
        execute format(
            'create policy system_access on %I as permissive for all to skillet_system
                 using (true) with check (true)', t);
        execute format('revoke all on %I from public', t);
        -- Written only by the triggers below (SECURITY DEFINER); the API reads them.
        execute format('grant select on %I to skillet_api', t);
    end loop;
end
$$;

create function skillet_insight_bucket(p_seconds double precision) returns smallint
language sql immutable parallel safe as $$
    select least(63, greatest(0, ceil(ln(greatest(p_seconds, 1.0)) / ln(1.25))))::smallint
$$;
comment on function skillet_insight_bucket(double precision) is
$$The reply-time histogram's bucket of p_seconds: b holds (1.25^(b-1), 1.25^b] seconds, bucket 0
up to 1 s, bucket 63 from about 12 days on (api.insight_series.bucket_of is its readable twin,
held equal by a test).$$;

create function skillet_org_local_time(p_org uuid, p_at timestamptz) returns timestamp
language plpgsql stable
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_zone text;
begin
    select h.timezone into v_zone from org_business_hours h where h.organization_id = p_org;
    begin
        return p_at at time zone coalesce(v_zone, 'America/Sao_Paulo');
    exception when invalid_parameter_value then
        -- A zone Python's tzdata knows and this server's does not: never fail the write.
        return p_at at time zone 'America/Sao_Paulo';
    end;
end;
$$;
comment on function skillet_org_local_time(uuid, timestamptz) is
$$p_at as the wall clock of p_org's business-hours time zone (default America/Sao_Paulo; a zone
this server does not know reads as the default): the panel's days are this date.$$;

create function skillet_insight_conversation_day(
    p_org uuid, p_day date, p_conversation uuid, p_with_person boolean
) returns void
language plpgsql
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_new boolean;
begin
    insert into conversation_days as c (organization_id, day, conversation_id, with_person)
    values (p_org, p_day, p_conversation, p_with_person)
    on conflict (organization_id, conversation_id, day) do update set with_person = true
        where p_with_person and not c.with_person
    returning (xmax = 0) into v_new;
    if not found then
        return;  -- counted already (and already with a person, if this one is)
    end if;
    if v_new then
        -- Writes are stamped now (a day's mark matters for a day or so): the conversation's
        -- marks from before yesterday go, so the table holds about one row per conversation.
        delete from conversation_days
        where organization_id = p_org and conversation_id = p_conversation
          and day < p_day - 1;
    end if;
    insert into conversation_daily as d (organization_id, day, slot, conversations, with_person)
    values (p_org, p_day, (pg_backend_pid() % 8)::smallint, case when v_new then 1 else 0 end,
            case when p_with_person then 1 else 0 end)
    on conflict (organization_id, day, slot) do update
        set conversations = d.conversations + excluded.conversations,
            with_person = d.with_person + excluded.with_person;
end;
$$;
revoke all on function skillet_insight_conversation_day(uuid, date, uuid, boolean) from public;
comment on function skillet_insight_conversation_day(uuid, date, uuid, boolean) is
$$Count p_conversation once on p_day (conversation_daily.conversations), and once more as with a
person the first time p_with_person says so that day; conversation_days is the mark (a new
day's mark lets the conversation's marks from before yesterday go).$$;

create function skillet_insight_message() returns trigger
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
declare
    -- A customer message counts when it was received; a reply when it was written.
    v_local timestamp := skillet_org_local_time(
        new.organization_id,
        case when new.direction = 'inbound' then coalesce(new.received_at, new.created_at)
             else new.created_at end);
    v_day date := v_local::date;
    v_slot smallint := (pg_backend_pid() % 8)::smallint;
    v_asked timestamptz;
begin
    if new.direction = 'inbound' then
        perform skillet_insight_conversation_day(new.organization_id, v_day,
                                                 new.conversation_id, false);
        insert into customer_message_daily as d (organization_id, day, quarter, slot, messages)
        values (new.organization_id, v_day,
                (extract(hour from v_local) * 4 + floor(extract(minute from v_local) / 15))::smallint,
                v_slot, 1)
        on conflict (organization_id, day, quarter, slot) do update
            set messages = d.messages + 1;
        return null;
    end if;
    if new.author in ('person', 'phone') then
        perform skillet_insight_conversation_day(new.organization_id, v_day,
                                                 new.conversation_id, true);
    elsif new.author = 'agent' and new.reply_to_id is not null then
        select m.received_at into v_asked from messages m where m.id = new.reply_to_id;
        if v_asked is not null then
            insert into reply_time_daily as r (organization_id, day, who, bucket, slot, replies)
            values (new.organization_id, v_day, 'agent',
                    skillet_insight_bucket(extract(epoch from new.created_at - v_asked)),
                    v_slot, 1)
            on conflict (organization_id, day, who, bucket, slot) do update
                set replies = r.replies + 1;
        end if;
    end if;
    return null;
end;
$$;
revoke all on function skillet_insight_message() from public;
comment on function skillet_insight_message() is
$$Trigger of messages (after insert): a customer message counts its conversation's day and its
quarter hour; a person's or the phone's message marks the day's conversation with_person; an
agent reply to a customer message adds its reply time (from that message's receipt).$$;

create trigger messages_insight
    after insert on messages
    for each row execute function skillet_insight_message();

create function skillet_insight_conversation() returns trigger
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_slot smallint := (pg_backend_pid() % 8)::smallint;
    v_day date;
begin
    if old.mode = 'agent' and new.mode <> 'agent' then
        -- The day of the change (skillet_change_mode stamps mode_since with it); the
        -- conversation's day first (the lock order above).
        v_day := skillet_org_local_time(new.organization_id,
                                        coalesce(new.mode_since, now()))::date;
        perform skillet_insight_conversation_day(new.organization_id, v_day, new.id, true);
        insert into handoff_daily as h (organization_id, day, cause, slot, handoffs)
        values (new.organization_id, v_day, coalesce(new.mode_cause, ''), v_slot, 1)
        on conflict (organization_id, day, cause, slot) do update
            set handoffs = h.handoffs + 1;
    end if;
    -- A person's first reply since a handoff that happened before it (as the API's
    -- skillet_handoff_first_reply_seconds: a takeover by reply starts and answers at once).
    if old.handoff_at is not null and old.person_replied_at is null
       and new.person_replied_at is not null then
        v_day := skillet_org_local_time(new.organization_id, new.person_replied_at)::date;
        perform skillet_insight_conversation_day(new.organization_id, v_day, new.id, true);
        insert into reply_time_daily as r (organization_id, day, who, bucket, slot, replies)
        values (new.organization_id, v_day, 'person',
                skillet_insight_bucket(extract(epoch from new.person_replied_at - old.handoff_at)),
                v_slot, 1)
        on conflict (organization_id, day, who, bucket, slot) do update
            set replies = r.replies + 1;
    end if;
    return null;
end;
$$;
revoke all on function skillet_insight_conversation() from public;
comment on function skillet_insight_conversation() is
$$Trigger of conversations (after update of mode, person_replied_at): a change from the agent to
waiting or human counts a handoff of its cause; a person's first reply after a handoff adds
its time from the handoff; either marks the day's conversation with_person (first: the lock
order of the Painel's counters).$$;

create trigger conversations_insight
    after update of mode, person_replied_at on conversations
    for each row
    when ((old.mode = 'agent' and new.mode <> 'agent')
          or (old.person_replied_at is null and new.person_replied_at is not null))
    execute function skillet_insight_conversation();
