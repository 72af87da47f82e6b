-- The counts the curator judges by, and the daily activation counts a business reads, are
-- written by the reply's commit (skillet_commit_reply, redefined in 0017), in its transaction: a reply that is sent was counted.
-- Raw `skill_activations` rows stay fire-and-forget telemetry (they may be dropped under
-- load); they no longer carry usage. Matches cut by the injection cap get a trigger of their
-- own (`capped`), so `probe` keeps meaning "demand no skill serves".

alter table skill_activations drop constraint skill_activations_trigger_check;
alter table skill_activations add constraint skill_activations_trigger_check
    check (trigger in ('hard', 'probe', 'capped'));

-- One row per skill per UTC day: a stats request reads at most one row per skill per day,
-- however many activations there were.
create table skill_activation_daily (
    organization_id uuid not null references organizations (id),
    skill_name      text not null,
    day             date not null,
    hard_count      bigint not null default 0,
    probe_count     bigint not null default 0,
    capped_count    bigint not null default 0,
    primary key (organization_id, skill_name, day)
);

alter table skill_activation_daily enable row level security;
create policy tenant_isolation on skill_activation_daily
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- The one home of the usage increment (skills.usage_queries calls it for patches, pins and
-- the activation writer's batches; the reply commit below for uses and views). Increments
-- happen inside the row update, so concurrent writers never lose a count; `greatest` ignores
-- NULLs, so a stamp only moves forward. created_by of a new row comes from the version the
-- org has installed under that name. Rows are taken in the given order (callers sort), so
-- concurrent batches lock alike.
create function skillet_bump_usage(
    p_orgs uuid[], p_names text[], p_uses bigint[], p_views bigint[], p_patches bigint[],
    p_at timestamptz
) returns void
language sql as $$
insert into skill_usage as u (
    organization_id, skill_name, created_by, use_count, view_count, patch_count,
    last_used_at, last_viewed_at, last_patched_at, last_activity_at)
select d.organization_id, d.skill_name,
       coalesce((select v.created_by from skill_pointers p
                 join skill_versions v on v.id = p.version_id
                 where p.organization_id = d.organization_id and p.name = d.skill_name), 'user'),
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
    last_activity_at = greatest(u.last_activity_at, excluded.last_activity_at)
$$;

-- One turn's matches counted into its UTC day (p_triggers: 'hard' | 'probe' | 'capped').
create function skillet_bump_activation_daily(
    p_org uuid, p_names text[], p_triggers text[], p_at timestamptz
) returns void
language sql as $$
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
    capped_count = a.capped_count + excluded.capped_count
$$;
