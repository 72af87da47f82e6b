-- The turn's helper functions, same signatures and results, in PL/pgSQL instead of SQL.
-- Before PostgreSQL 18 a SQL-language function that is not inlined (these write, or are
-- called from PL/pgSQL) is parsed and planned again on every call, while PL/pgSQL keeps each
-- statement's plan for the session. Measured with pg_stat_statements on the turn bench
-- (PostgreSQL 15), with the generic plans below: the reply commit 2.69 -> 1.60 ms a turn, the
-- turn's three statements 3.69 -> 2.49 ms.

create or replace function skillet_claim_outbox(p_outbox uuid) returns table (
    reply_to_external_id text, last_inbound_at timestamptz, route_kind text, route_address text
)
language plpgsql as $$
#variable_conflict use_column
begin
    return query
    with target as (
        select id, organization_id, conversation_id, message_id from outbox
        where id = p_outbox and status = 'pending' and delivery_claimed_at is null
        for update
    ), context as (
        select t.id, i.external_id as reply_to_external_id,
               (select max(m.sent_at) from messages m
                where m.conversation_id = t.conversation_id and m.direction = 'inbound')
                   as last_inbound_at,
               route.kind as route_kind, route.address as route_address
        from target t
        join messages r on r.id = t.message_id
        left join messages i on i.id = r.reply_to_id
        left join lateral (
            select * from (
                select ch.kind, ch.address, 0 as preference
                from inbound_routes ir join channels ch on ch.id = ir.channel_id
                where ir.organization_id = t.organization_id and ir.external_id = i.external_id
                union all
                select ch.kind, ch.address, 1 from channels ch
                where ch.organization_id = t.organization_id
                  and (select count(*) from channels o
                       where o.organization_id = t.organization_id) = 1
            ) candidates order by preference limit 1
        ) route on true
    ), claimed as (
        update outbox o set delivery_claimed_at = now()
        from context c where o.id = c.id and c.route_kind is not null
    )
    select c.reply_to_external_id, c.last_inbound_at, c.route_kind, c.route_address
    from context c;
end;
$$;

create or replace function skillet_bump_usage(
    p_orgs uuid[], p_names text[], p_uses bigint[], p_views bigint[], p_patches bigint[],
    p_at timestamptz
) returns void
language plpgsql as $$
begin
    insert into skill_usage as u (
        organization_id, skill_name, created_by, use_count, view_count, patch_count,
        last_used_at, last_viewed_at, last_patched_at, last_activity_at)
    select d.organization_id, d.skill_name,
           coalesce((select v.created_by from skill_pointers p
                     join skill_versions v on v.id = p.version_id
                     where p.organization_id = d.organization_id and p.name = d.skill_name),
                    'user'),
           d.uses, d.views, d.patches,
           case when d.uses > 0 then p_at end,
           case when d.views > 0 then p_at end,
           case when d.patches > 0 then p_at end,
           p_at
    from unnest(p_orgs, p_names, p_uses, p_views, p_patches)
         with ordinality as d(organization_id, skill_name, uses, views, patches, n)
    order by d.n
    on conflict (organization_id, skill_name) do update set
        use_count = u.use_count + excluded.use_count,
        view_count = u.view_count + excluded.view_count,
        patch_count = u.patch_count + excluded.patch_count,
        last_used_at = greatest(u.last_used_at, excluded.last_used_at),
        last_viewed_at = greatest(u.last_viewed_at, excluded.last_viewed_at),
        last_patched_at = greatest(u.last_patched_at, excluded.last_patched_at),
        last_activity_at = greatest(u.last_activity_at, excluded.last_activity_at);
end;
$$;

create or replace function skillet_bump_token_usage(p_org uuid, p_usage jsonb, p_at timestamptz)
returns void
language plpgsql as $$
begin
    insert into token_usage_daily as t
        (organization_id, agent_id, provider, model, day, slot, turns, calls, input_tokens,
         output_tokens, cache_read_tokens, cache_write_tokens, unreported_turns)
    select p_org, (p_usage ->> 'agent_id')::uuid, coalesce(p_usage ->> 'provider', ''),
           coalesce(p_usage ->> 'model', ''), (p_at at time zone 'UTC')::date,
           pg_backend_pid() % 32, 1,
           coalesce((p_usage ->> 'calls')::bigint, 0),
           coalesce((p_usage ->> 'input_tokens')::bigint, 0),
           coalesce((p_usage ->> 'output_tokens')::bigint, 0),
           coalesce((p_usage ->> 'cache_read_tokens')::bigint, 0),
           coalesce((p_usage ->> 'cache_write_tokens')::bigint, 0),
           case when p_usage ->> 'input_tokens' is null or p_usage ->> 'output_tokens' is null
                then 1 else 0 end
    on conflict (organization_id, agent_id, provider, model, day, slot) do update set
        turns = t.turns + 1,
        calls = t.calls + excluded.calls,
        input_tokens = t.input_tokens + excluded.input_tokens,
        output_tokens = t.output_tokens + excluded.output_tokens,
        cache_read_tokens = t.cache_read_tokens + excluded.cache_read_tokens,
        cache_write_tokens = t.cache_write_tokens + excluded.cache_write_tokens,
        unreported_turns = t.unreported_turns + excluded.unreported_turns;
end;
$$;

create or replace function skillet_bump_activation_daily(
    p_org uuid, p_names text[], p_triggers text[], p_at timestamptz
) returns void
language plpgsql as $$
begin
    insert into skill_activation_daily as a
        (organization_id, skill_name, day, hard_count, probe_count, capped_count)
    select p_org, d.skill_name, (p_at at time zone 'UTC')::date,
           count(*) filter (where d.trigger = 'hard'),
           count(*) filter (where d.trigger = 'probe'),
           count(*) filter (where d.trigger = 'capped')
    from unnest(p_names, p_triggers) as d(skill_name, trigger)
    group by d.skill_name
    order by d.skill_name
    on conflict (organization_id, skill_name, day) do update set
        hard_count = a.hard_count + excluded.hard_count,
        probe_count = a.probe_count + excluded.probe_count,
        capped_count = a.capped_count + excluded.capped_count;
end;
$$;

-- Null (not false) when the lease stays, as the SQL version returned for no row.
create or replace function skillet_release_lease(p_conversation uuid, p_lease uuid)
returns boolean
language plpgsql as $$
declare
    released boolean;
begin
    update conversations c set lease_token = null, lease_until = null
    where c.id = p_conversation and c.lease_token = p_lease
      and not exists (
          select 1 from messages m
          where m.conversation_id = p_conversation and m.direction = 'inbound'
            and m.answered_by is null and m.context_at is null)
    returning true into released;
    return released;
end;
$$;

-- Every lease taken asks whether the conversation has a committed reply not yet handed to a
-- channel. Without this index that question walks every pending row of every org (a backlog
-- during a channel outage makes each turn slower); rows leave it once claimed or sent, so it
-- stays as small as the backlog.
create index outbox_undelivered_idx on outbox (conversation_id, created_at, id)
    where status = 'pending' and delivery_claimed_at is null;

create or replace function skillet_bind_org(p_org uuid) returns void
language plpgsql as $$
begin
    perform set_config('skillet.organization_id', p_org::text, true);
end;
$$;

-- PL/pgSQL plans a statement with its parameters' values for the first five calls, then
-- keeps doing so whenever the generic plan's estimate looks worse, which here it always
-- does: the usage upsert alone was planned again on every turn (0.4 ms). Every statement
-- of the turn finds its rows by key, so the generic plan is the plan: taken for the whole
-- call, the functions these call included.
alter function skillet_take_conversation(uuid, uuid, uuid, double precision, integer, integer)
    set plan_cache_mode = force_generic_plan;
alter function skillet_commit_turn(
    uuid, uuid, text, uuid[], timestamptz, text, text[], text[], text[], text[], timestamptz,
    uuid, jsonb, boolean
) set plan_cache_mode = force_generic_plan;
alter function skillet_continue_conversation(uuid, uuid, uuid, uuid, text[], integer, integer)
    set plan_cache_mode = force_generic_plan;
