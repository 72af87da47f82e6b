-- The curator: one row per persisted run report, restore stamps on skill_usage, and the
-- indexes the sleep-cycle schedule reads (last run, last inbound message per org).

-- Restoring an archived skill stamps activity here, so last_activity_at stays "the newest of
-- last used / viewed / patched / restored" and never the creation time.
alter table skill_usage add column restored_at timestamptz null;

create table curator_runs (
    id              bigint generated always as identity primary key,
    organization_id uuid not null references organizations (id),
    trigger         text not null check (trigger in ('manual', 'idle', 'ceiling')),
    -- The curator's clock for this run: the cutoffs derive from it.
    ran_at          timestamptz not null,
    -- True when ran_at came from `--now` (a replay): the schedule ignores such runs.
    replayed        boolean not null default false,
    stale_cutoff    timestamptz not null,
    archive_cutoff  timestamptz not null,
    transitioned    jsonb not null,  -- [{name, from, to}], sorted by name
    skipped         jsonb not null,  -- [{name, reason}], sorted by name
    created_at      timestamptz not null default now()
);
create index curator_runs_org_idx on curator_runs (organization_id, ran_at) where not replayed;

-- "When did this org last have a turn": one index probe per org for the idle trigger.
create index messages_org_inbound_created_idx on messages (organization_id, created_at)
    where direction = 'inbound';

-- A curator pass changes the state of thousands of rows in one statement: bump each org's
-- catalog revision once per statement instead of once per row (same transaction, same
-- guarantee: a turn that starts after the commit sees the change). Insert/delete keep the
-- row-level trigger of 0001. Transition tables cannot be combined with a column list, so
-- this fires on every UPDATE and compares old and new state itself.
drop trigger skill_usage_bump_revision on skill_usage;

create trigger skill_usage_bump_revision
after insert or delete on skill_usage
for each row execute function bump_skill_catalog_revision();

create function bump_skill_catalog_revisions_on_state_change() returns trigger
language plpgsql as $$
begin
    insert into skill_catalog_revisions as r (organization_id)
    select distinct n.organization_id
    from new_rows n
    join old_rows o on o.organization_id = n.organization_id and o.skill_name = n.skill_name
    where o.state is distinct from n.state
    order by 1
    on conflict (organization_id) do update set revision = r.revision + 1;
    return null;
end;
$$;

create trigger skill_usage_state_bump_revision
after update on skill_usage
referencing old table as old_rows new table as new_rows
for each statement execute function bump_skill_catalog_revisions_on_state_change();
