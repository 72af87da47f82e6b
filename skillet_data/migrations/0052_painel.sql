-- Painel: the daily counts the console's panel (GET /v1/insights) reads, kept by triggers on
-- the rows every writer already goes through (a message stored; a conversation's mode or its
-- first person reply), so no turn, webhook or API code path changes. Days are the org's days:
-- the local date in its business-hours time zone (org_business_hours.timezone, default
-- America/Sao_Paulo) at the moment the count is written.
--   conversation_days  one row per conversation per day it had a message; with_person once a
--                      person (console, API, the owner's phone) wrote in it, answered it or
--                      it was handed to one that day: the mark that counts each once
--   insight_daily      an org's counts of a day, in one row per slot:
--     conversations, with_person     conversations of the day, and those with a person
--     handoffs_<cause>               conversations handed to a person, by mode_cause
--     customer_messages[q + 1]       customer messages of quarter hour q of the day (0-95):
--                                    the panel judges each quarter by the business hours
--     agent_replies[b + 1]           a histogram of the agent's reply times (from the
--     person_first_replies[b + 1]    customer's last message of the burst) and of people's
--                                    first reply after a handoff: bucket b holds seconds in
--                                    (1.25^(b-1), 1.25^b] (bucket 0: up to 1 s), so a
--                                    percentile is read to about 12%
-- One wide row, so a write takes one counter row (and its conversation's mark, first): two
-- writers never hold two counter rows in opposite orders. Rows are spread over 8 slots (by
-- backend pid) so concurrent writers of an org rarely wait on one; readers sum the slots.

create table conversation_days (
    organization_id uuid not null references organizations (id),
    day             date not null,
    conversation_id uuid not null,
    with_person     boolean not null default false,
    primary key (organization_id, day, conversation_id)
);

create table insight_daily (
    organization_id      uuid not null references organizations (id),
    day                  date not null,
    slot                 smallint not null check (slot between 0 and 7),
    conversations        bigint not null default 0,
    with_person          bigint not null default 0,
    handoffs_customer    bigint not null default 0,
    handoffs_tool        bigint not null default 0,
    handoffs_console     bigint not null default 0,
    handoffs_phone       bigint not null default 0,
    handoffs_other       bigint not null default 0,
    customer_messages    bigint[] not null default array_fill(0::bigint, array[96])
                             check (cardinality(customer_messages) = 96),
    agent_replies        bigint[] not null default array_fill(0::bigint, array[64])
                             check (cardinality(agent_replies) = 64),
    person_first_replies bigint[] not null default array_fill(0::bigint, array[64])
                             check (cardinality(person_first_replies) = 64),
    primary key (organization_id, day, slot)
);

do $$
declare
    t text;
begin
    foreach t in array array['conversation_days', 'insight_daily'] loop
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
    p_org uuid, p_day date, p_conversation uuid, p_with_person boolean,
    out counted bigint, out with_person bigint
)
language plpgsql
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_new boolean;
begin
    counted := 0;
    with_person := 0;
    insert into conversation_days as c (organization_id, day, conversation_id, with_person)
    values (p_org, p_day, p_conversation, p_with_person)
    on conflict (organization_id, day, conversation_id) do update set with_person = true
        where p_with_person and not c.with_person
    returning (xmax = 0) into v_new;
    if found then
        counted := case when v_new then 1 else 0 end;
        with_person := case when p_with_person then 1 else 0 end;
    end if;
end;
$$;
revoke all on function skillet_insight_conversation_day(uuid, date, uuid, boolean) from public;
comment on function skillet_insight_conversation_day(uuid, date, uuid, boolean) is
$$Mark p_conversation's day (conversation_days): `counted` 1 the first time it is seen that day,
`with_person` 1 the first time p_with_person says a person took part that day; what the
caller adds to insight_daily in its one counter write.$$;

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
    v_mark record;
    v_index int;
    v_counts bigint[];
    v_asked timestamptz;
begin
    if new.direction = 'inbound' then
        v_mark := skillet_insight_conversation_day(new.organization_id, v_day,
                                                   new.conversation_id, false);
        v_index := 1 + (extract(hour from v_local) * 4
                        + floor(extract(minute from v_local) / 15))::int;
        v_counts := array_fill(0::bigint, array[96]);
        v_counts[v_index] := 1;
        insert into insight_daily as d (organization_id, day, slot, conversations,
                                        customer_messages)
        values (new.organization_id, v_day, v_slot, v_mark.counted, v_counts)
        on conflict (organization_id, day, slot) do update
            set conversations = d.conversations + excluded.conversations,
                customer_messages[v_index] = d.customer_messages[v_index] + 1;
    elsif new.author in ('person', 'phone') then
        v_mark := skillet_insight_conversation_day(new.organization_id, v_day,
                                                   new.conversation_id, true);
        if v_mark.counted + v_mark.with_person > 0 then
            insert into insight_daily as d (organization_id, day, slot, conversations,
                                            with_person)
            values (new.organization_id, v_day, v_slot, v_mark.counted, v_mark.with_person)
            on conflict (organization_id, day, slot) do update
                set conversations = d.conversations + excluded.conversations,
                    with_person = d.with_person + excluded.with_person;
        end if;
    elsif new.author = 'agent' and new.reply_to_id is not null then
        select m.received_at into v_asked from messages m where m.id = new.reply_to_id;
        if v_asked is not null then
            v_index := 1 + skillet_insight_bucket(extract(epoch from new.created_at - v_asked));
            v_counts := array_fill(0::bigint, array[64]);
            v_counts[v_index] := 1;
            insert into insight_daily as d (organization_id, day, slot, agent_replies)
            values (new.organization_id, v_day, v_slot, v_counts)
            on conflict (organization_id, day, slot) do update
                set agent_replies[v_index] = d.agent_replies[v_index] + 1;
        end if;
    end if;
    return null;
end;
$$;
revoke all on function skillet_insight_message() from public;
comment on function skillet_insight_message() is
$$Trigger of messages (after insert): a customer message counts its conversation's day and its
quarter hour; a person's or the phone's message marks the day's conversation with_person; an
agent reply to a customer message adds its reply time (from that message's receipt). One
counter row each (insight_daily).$$;

create trigger messages_insight
    after insert on messages
    for each row execute function skillet_insight_message();

create function skillet_insight_conversation() returns trigger
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_slot smallint := (pg_backend_pid() % 8)::smallint;
    v_handoff boolean := old.mode = 'agent' and new.mode <> 'agent';
    -- A person's first reply since a handoff that happened before it (as the API's
    -- skillet_handoff_first_reply_seconds: a takeover by reply starts and answers at once).
    v_replied boolean := old.handoff_at is not null and old.person_replied_at is null
                         and new.person_replied_at is not null;
    -- The change's day: skillet_change_mode stamps mode_since and person_replied_at with it.
    v_day date := skillet_org_local_time(
        new.organization_id,
        case when v_replied then new.person_replied_at
             else coalesce(new.mode_since, now()) end)::date;
    v_mark record;
    v_cause text := coalesce(new.mode_cause, '');
    v_index int := 0;
    v_counts bigint[] := array_fill(0::bigint, array[64]);
begin
    if not (v_handoff or v_replied) then
        return null;
    end if;
    v_mark := skillet_insight_conversation_day(new.organization_id, v_day, new.id, true);
    if v_replied then
        v_index := 1 + skillet_insight_bucket(
            extract(epoch from new.person_replied_at - old.handoff_at));
        v_counts[v_index] := 1;
    end if;
    insert into insight_daily as d (organization_id, day, slot, conversations, with_person,
                                    handoffs_customer, handoffs_tool, handoffs_console,
                                    handoffs_phone, handoffs_other, person_first_replies)
    values (new.organization_id, v_day, v_slot, v_mark.counted, v_mark.with_person,
            (v_handoff and v_cause = 'customer')::int, (v_handoff and v_cause = 'tool')::int,
            (v_handoff and v_cause = 'console')::int, (v_handoff and v_cause = 'phone')::int,
            (v_handoff and v_cause not in ('customer', 'tool', 'console', 'phone'))::int,
            v_counts)
    on conflict (organization_id, day, slot) do update
        set conversations = d.conversations + excluded.conversations,
            with_person = d.with_person + excluded.with_person,
            handoffs_customer = d.handoffs_customer + excluded.handoffs_customer,
            handoffs_tool = d.handoffs_tool + excluded.handoffs_tool,
            handoffs_console = d.handoffs_console + excluded.handoffs_console,
            handoffs_phone = d.handoffs_phone + excluded.handoffs_phone,
            handoffs_other = d.handoffs_other + excluded.handoffs_other,
            person_first_replies[greatest(v_index, 1)] =
                d.person_first_replies[greatest(v_index, 1)]
                + excluded.person_first_replies[greatest(v_index, 1)];
    return null;
end;
$$;
revoke all on function skillet_insight_conversation() from public;
comment on function skillet_insight_conversation() is
$$Trigger of conversations (after update of mode, person_replied_at): a change from the agent to
waiting or human counts a handoff of its cause; a person's first reply after a handoff adds
its time from the handoff; either marks the day's conversation with_person. One counter row
(insight_daily).$$;

create trigger conversations_insight
    after update of mode, person_replied_at on conversations
    for each row
    when ((old.mode = 'agent' and new.mode <> 'agent')
          or (old.person_replied_at is null and new.person_replied_at is not null))
    execute function skillet_insight_conversation();
