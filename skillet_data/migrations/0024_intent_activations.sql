-- A skill injected because its catalog intent model accepted the message (turn.intent_model:
-- its keywords did not match) is recorded as `intent`, apart from `hard` (its keywords
-- matched): a business reads which of its skills' uses the platform's classifier decided.
-- Both are injected and both count as uses (skill_usage); `probe` and `capped` are unchanged.
-- Rolling deploy: apply before the new workers (they write `intent`) and the new API (it
-- reads intent_count) start; older workers have no intent models and never write it.

alter table skill_activations drop constraint skill_activations_trigger_check;
-- Every existing row met the narrower check: NOT VALID spares re-reading them under this
-- statement's exclusive lock; new rows are checked as before.
alter table skill_activations add constraint skill_activations_trigger_check
    check (trigger in ('hard', 'probe', 'capped', 'intent')) not valid;

-- A constant default: no table rewrite.
alter table skill_activation_daily add column intent_count bigint not null default 0;

-- As 0023 (PL/pgSQL, same signature and grants), with the `intent` count.
create or replace function skillet_bump_activation_daily(
    p_org uuid, p_names text[], p_triggers text[], p_at timestamptz
) returns void
language plpgsql as $$
begin
    insert into skill_activation_daily as a
        (organization_id, skill_name, day, hard_count, probe_count, capped_count, intent_count)
    select p_org, d.skill_name, (p_at at time zone 'UTC')::date,
           count(*) filter (where d.trigger = 'hard'),
           count(*) filter (where d.trigger = 'probe'),
           count(*) filter (where d.trigger = 'capped'),
           count(*) filter (where d.trigger = 'intent')
    from unnest(p_names, p_triggers) as d(skill_name, trigger)
    group by d.skill_name
    order by d.skill_name
    on conflict (organization_id, skill_name, day) do update set
        hard_count = a.hard_count + excluded.hard_count,
        probe_count = a.probe_count + excluded.probe_count,
        capped_count = a.capped_count + excluded.capped_count,
        intent_count = a.intent_count + excluded.intent_count;
end;
$$;
