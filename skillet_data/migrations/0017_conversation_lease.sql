-- Postgres alone owns a conversation: what was received (the message row, written before
-- the webhook answers), what was answered (answered_by) and who holds it (a lease on the
-- conversation row, with a fencing token the reply commit checks). Redis carries only the
-- queue: losing it delays replies (a sweeper re-enqueues), never loses or repeats them.

alter table conversations add column lease_token uuid null;
alter table conversations add column lease_until timestamptz null;

-- A message the holder passed over as context (a photo with no question after it, on a
-- number that does not answer photos): never part of a later reply, shown as history.
alter table messages add column context_at timestamptz null;
-- The agent of the number it came in on (null: the org's first agent).
alter table messages add column agent_id uuid null;

-- What each turn's model calls cost, per org, agent, provider and model per UTC day, written
-- by the reply's commit: a business budgets from it. A turn whose provider did not report a
-- count adds to `unreported_turns` instead of adding a partial (too low) sum.
create table token_usage_daily (
    organization_id    uuid not null references organizations (id),
    agent_id           uuid null,
    provider           text not null,
    model              text not null,
    day                date not null,
    turns              bigint not null default 0,
    calls              bigint not null default 0,
    input_tokens       bigint not null default 0,
    output_tokens      bigint not null default 0,
    cache_read_tokens  bigint not null default 0,
    cache_write_tokens bigint not null default 0,
    unreported_turns   bigint not null default 0,
    unique nulls not distinct (organization_id, agent_id, provider, model, day)
);
create index token_usage_daily_day_idx on token_usage_daily (day);

alter table token_usage_daily enable row level security;
create policy tenant_isolation on token_usage_daily
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- What the holder answers next: open inbound messages, in arrival order.
create index messages_open_idx on messages (conversation_id, received_at, id)
    where direction = 'inbound' and answered_by is null and context_at is null;
-- What the sweeper looks for across every org: messages waiting for a reply, oldest first.
create index messages_waiting_idx on messages (received_at)
    where direction = 'inbound' and answered_by is null and expects_reply;

-- As in 0008, fenced by the lease and with the turn's durable counts (0016) in the same
-- transaction. `p_lease` must still hold the conversation, so a holder whose lease ran out
-- (a long pause, a partition) can never commit over its successor; a null `p_lease` and no
-- counts is the previous release's six-argument call (workers that still hold a Redis
-- lease, during a rolling deploy), which keeps the previous behaviour. `p_used`: the matched
-- skills injected (a use each); `p_viewed`: skills whose files the model read (a view each
-- read); `p_names`/`p_triggers`: the day's activation counts.
drop function skillet_commit_reply(uuid, uuid, text, uuid[], timestamptz, text);
create function skillet_commit_reply(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text,
    p_used text[] default '{}', p_viewed text[] default '{}',
    p_names text[] default '{}', p_triggers text[] default '{}',
    p_at timestamptz default now(), p_lease uuid default null, p_usage jsonb default null
) returns table (outcome text, outbox_id uuid, reply_id uuid)
language plpgsql as $$
declare
    v_reply uuid;
    v_outbox uuid;
    v_names text[];
    v_uses bigint[];
    v_views bigint[];
begin
    perform 1 from conversations where id = p_conversation for update;
    if p_lease is not null and not exists (
        select 1 from conversations
        where id = p_conversation and lease_token = p_lease and lease_until > now()
    ) then
        return query select 'lease_lost'::text, null::uuid, null::uuid;
        return;
    end if;
    if exists (
        select 1 from messages
        where conversation_id = p_conversation and direction = 'inbound' and answered_by is null
          and expects_reply
          and coalesce(received_at, created_at) <= p_first_received and not (id = any(p_batch))
    ) then
        return query select 'overtaken'::text, null::uuid, null::uuid;
        return;
    end if;
    if (select count(*) from messages
        where id = any(p_batch) and direction = 'inbound' and answered_by is null)
       <> cardinality(p_batch) then
        return query select 'answered'::text, null::uuid, null::uuid;
        return;
    end if;
    insert into messages (organization_id, conversation_id, direction, channel, body, reply_to_id)
    values (p_org, p_conversation, 'outbound', p_channel, p_body, p_batch[cardinality(p_batch)])
    returning id into v_reply;
    update messages set answered_by = v_reply where id = any(p_batch);
    insert into outbox (organization_id, conversation_id, message_id, body)
    values (p_org, p_conversation, v_reply, p_body)
    returning id into v_outbox;
    select array_agg(n order by n), array_agg(uses order by n), array_agg(views order by n)
    into v_names, v_uses, v_views
    from (select n, count(*) filter (where src = 'u') as uses,
                 count(*) filter (where src = 'v') as views
          from (select unnest(p_used) as n, 'u' as src
                union all select unnest(p_viewed), 'v') as events
          group by n) as counted;
    if v_names is not null then
        perform skillet_bump_usage(
            array_fill(p_org, array[cardinality(v_names)]), v_names, v_uses, v_views,
            array_fill(0::bigint, array[cardinality(v_names)]), p_at);
    end if;
    if cardinality(p_names) > 0 then
        perform skillet_bump_activation_daily(p_org, p_names, p_triggers, p_at);
    end if;
    if p_usage is not null then
        perform skillet_bump_token_usage(p_org, p_usage, p_at);
    end if;
    return query select 'replied'::text, v_outbox, v_reply;
end;
$$;

-- One turn's usage ({agent_id, provider, model, calls, input_tokens, output_tokens,
-- cache_read_tokens, cache_write_tokens}; a null count: the provider did not report it).
create function skillet_bump_token_usage(p_org uuid, p_usage jsonb, p_at timestamptz)
returns void
language sql as $$
insert into token_usage_daily as t
    (organization_id, agent_id, provider, model, day, turns, calls, input_tokens,
     output_tokens, cache_read_tokens, cache_write_tokens, unreported_turns)
select p_org, (p_usage ->> 'agent_id')::uuid, coalesce(p_usage ->> 'provider', ''),
       coalesce(p_usage ->> 'model', ''), (p_at at time zone 'UTC')::date, 1,
       coalesce((p_usage ->> 'calls')::bigint, 0),
       coalesce((p_usage ->> 'input_tokens')::bigint, 0),
       coalesce((p_usage ->> 'output_tokens')::bigint, 0),
       coalesce((p_usage ->> 'cache_read_tokens')::bigint, 0),
       coalesce((p_usage ->> 'cache_write_tokens')::bigint, 0),
       case when p_usage ->> 'input_tokens' is null or p_usage ->> 'output_tokens' is null
            then 1 else 0 end
on conflict (organization_id, agent_id, provider, model, day) do update set
    turns = t.turns + 1,
    calls = t.calls + excluded.calls,
    input_tokens = t.input_tokens + excluded.input_tokens,
    output_tokens = t.output_tokens + excluded.output_tokens,
    cache_read_tokens = t.cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = t.cache_write_tokens + excluded.cache_write_tokens,
    unreported_turns = t.unreported_turns + excluded.unreported_turns
$$;

-- Release the lease only when nothing waits: a message committed before this statement is
-- seen (and the holder keeps going); one committed after it finds the lease free.
create function skillet_release_lease(p_conversation uuid, p_lease uuid) returns boolean
language sql as $$
    update conversations c set lease_token = null, lease_until = null
    where c.id = p_conversation and c.lease_token = p_lease
      and not exists (
          select 1 from messages m
          where m.conversation_id = p_conversation and m.direction = 'inbound'
            and m.answered_by is null and m.context_at is null)
    returning true
$$;
