-- The Painel's two per-message counters are kept off the message's own write. A customer
-- message (customer_message_daily) and an agent reply (reply_time_daily) each upserted a row
-- shared by every writer of the org (8 slots by backend pid), and held its lock until the
-- writer's commit: the webhook's statement and the turn's commit waited on each other there,
-- and the upsert with its conflict and check constraints cost more than the insert it counted.
-- Now the trigger appends a row to insight_pending (an insert, nothing shared, no index), and
-- skillet_insight_fold moves the pending rows into those two rollups, one upsert per day and
-- quarter (or bucket): the Painel's reader folds its org before reading, the worker's
-- conversation sweep folds every org every 15 s. Days are still counted when the row is
-- written (the org's day at that moment), so what the Painel shows does not change.
-- conversation_days / conversation_daily stay in the trigger: a conversation's mark is its own
-- row, and its day's count moves once per conversation a day; a message whose mark is there
-- already now only reads it (the upsert locked the mark even when it changed nothing, so a
-- customer's messages waited on each other's commits).

create table insight_pending (
    organization_id uuid not null references organizations (id),
    day             date not null,
    -- 'customer': a customer message, n its quarter hour (0-95);
    -- 'agent': the agent's reply, n its reply-time bucket (skillet_insight_bucket).
    who             text not null,
    n               smallint not null
);

alter table insight_pending enable row level security;
alter table insight_pending force row level security;
create policy tenant_isolation on insight_pending
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on insight_pending as permissive for all to skillet_system
    using (true) with check (true);
revoke all on insight_pending from public;

create or replace function skillet_org_local_time(p_org uuid, p_at timestamptz) returns timestamp
language plpgsql stable
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_zone text;
begin
    select h.timezone into v_zone from org_business_hours h where h.organization_id = p_org;
    if v_zone is null then
        -- No exception block for the default: entering one starts a subtransaction, and
        -- this runs for every message stored.
        return p_at at time zone 'America/Sao_Paulo';
    end if;
    begin
        return p_at at time zone v_zone;
    exception when invalid_parameter_value then
        -- A zone Python's tzdata knows and this server's does not: never fail the write.
        return p_at at time zone 'America/Sao_Paulo';
    end;
end;
$$;

create or replace function skillet_insight_conversation_day(
    p_org uuid, p_day date, p_conversation uuid, p_with_person boolean
) returns void
language plpgsql
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_new boolean;
begin
    if exists (select 1 from conversation_days c
               where c.organization_id = p_org and c.conversation_id = p_conversation
                 and c.day = p_day and (c.with_person or not p_with_person)) then
        return;  -- counted already (and already with a person, if this one is)
    end if;
    insert into conversation_days as c (organization_id, day, conversation_id, with_person)
    values (p_org, p_day, p_conversation, p_with_person)
    on conflict (organization_id, conversation_id, day) do update set with_person = true
        where p_with_person and not c.with_person
    returning (xmax = 0) into v_new;
    if not found then
        return;  -- counted by a writer that came first
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

create or replace function skillet_insight_message() returns trigger
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
    v_asked timestamptz;
begin
    if new.direction = 'inbound' then
        perform skillet_insight_conversation_day(new.organization_id, v_day,
                                                 new.conversation_id, false);
        insert into insight_pending (organization_id, day, who, n)
        values (new.organization_id, v_day, 'customer',
                (extract(hour from v_local) * 4 + floor(extract(minute from v_local) / 15))::smallint);
        return null;
    end if;
    if new.author in ('person', 'phone') then
        perform skillet_insight_conversation_day(new.organization_id, v_day,
                                                 new.conversation_id, true);
    elsif new.author = 'agent' and new.reply_to_id is not null then
        select m.received_at into v_asked from messages m where m.id = new.reply_to_id;
        if v_asked is not null then
            insert into insight_pending (organization_id, day, who, n)
            values (new.organization_id, v_day, 'agent',
                    skillet_insight_bucket(extract(epoch from new.created_at - v_asked)));
        end if;
    end if;
    return null;
end;
$$;
comment on function skillet_insight_message() is
$$Trigger of messages (after insert): a customer message counts its conversation's day and
appends its quarter hour to insight_pending; a person's or the phone's message marks the day's
conversation with_person; an agent reply to a customer message appends its reply time (from
that message's receipt) to insight_pending. skillet_insight_fold moves the pending rows into
customer_message_daily and reply_time_daily.$$;

create function skillet_insight_fold(p_org uuid) returns void
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
begin
    -- A row still uncommitted is not seen here and stays for the next fold; a row two folds
    -- see at once is deleted, so counted, by one of them. Rows go in key order, so two folds
    -- lock the rollups' rows in the same order.
    with moved as (
        delete from insight_pending p
        where p_org is null or p.organization_id = p_org
        returning p.organization_id, p.day, p.who, p.n
    ), counted as (
        select m.organization_id, m.day, m.who, m.n, count(*) as c
        from moved m group by m.organization_id, m.day, m.who, m.n
    ), customers as (
        insert into customer_message_daily as d (organization_id, day, quarter, slot, messages)
        select c.organization_id, c.day, c.n, (pg_backend_pid() % 8)::smallint, c.c
        from counted c where c.who = 'customer'
        order by c.organization_id, c.day, c.n
        on conflict (organization_id, day, quarter, slot) do update
            set messages = d.messages + excluded.messages
    )
    insert into reply_time_daily as r (organization_id, day, who, bucket, slot, replies)
    select c.organization_id, c.day, 'agent', c.n, (pg_backend_pid() % 8)::smallint, c.c
    from counted c where c.who = 'agent'
    order by c.organization_id, c.day, c.n
    on conflict (organization_id, day, who, bucket, slot) do update
        set replies = r.replies + excluded.replies;
end;
$$;
revoke all on function skillet_insight_fold(uuid) from public;
grant execute on function skillet_insight_fold(uuid) to skillet_api, skillet_worker;
comment on function skillet_insight_fold(uuid) is
$$Move p_org's insight_pending rows (every org's when p_org is null) into the Painel's rollups:
customer messages per quarter hour (customer_message_daily) and the agent's reply times
(reply_time_daily), one upsert per day and quarter or bucket. Run by the Painel's reader before
it reads (GET /v1/insights) and by the worker's conversation sweep for every org.$$;
