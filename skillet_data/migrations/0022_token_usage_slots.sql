-- An org's model-usage rollup row is updated by every reply commit of that org and day, and a
-- row lock lasts until the commit's WAL flush: one busy org's commits queued behind each other
-- (measured: the turn bench read 0.41-0.44 of a no-op job's rate with the bump, 0.49-0.53
-- without it). Each (org, agent, provider, model, day) now has up to 32 rows, one per slot;
-- a commit takes its connection's slot (backend pid), so concurrent commits of one org touch
-- different rows. Readers sum the slots.
alter table token_usage_daily add column slot smallint not null default 0
    check (slot between 0 and 31);

do $$
declare
    old_key text;
begin
    select c.conname into old_key
    from pg_constraint c
    where c.conrelid = 'token_usage_daily'::regclass and c.contype = 'u';
    execute format('alter table token_usage_daily drop constraint %I', old_key);
end
$$;
alter table token_usage_daily add constraint token_usage_daily_slot_key
    unique nulls not distinct (organization_id, agent_id, provider, model, day, slot);

create or replace function skillet_bump_token_usage(p_org uuid, p_usage jsonb, p_at timestamptz)
returns void
language sql as $$
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
    unreported_turns = t.unreported_turns + excluded.unreported_turns
$$;
