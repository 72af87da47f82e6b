-- The curator: one row per persisted run report, restore stamps on skill_usage, and the
-- indexes the sleep-cycle schedule reads (last run, last inbound message per org).

-- Restoring an archived skill stamps activity here, so last_activity_at stays "the newest of
-- last used / viewed / patched / restored" and never the creation time.
alter table skill_usage add column restored_at timestamptz null;

-- skill_usage rows are updated all the time (counter bumps, curator passes) and never grow:
-- leave room in each page so updates stay on the page (HOT) and skip index maintenance.
alter table skill_usage set (fillfactor = 80);

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
    -- json, not jsonb: written once by the pass as it built them, read rarely.
    transitioned    json not null,  -- [{name, from, to}], sorted by name
    skipped         json not null,  -- [{name, reason}], sorted by name
    created_at      timestamptz not null default now()
);
create index curator_runs_org_idx on curator_runs (organization_id, ran_at) where not replayed;

-- "When did this org last have a turn": one index probe per org for the idle trigger.
create index messages_org_inbound_created_idx on messages (organization_id, created_at)
    where direction = 'inbound';

-- A curator pass changes the state of thousands of rows in one statement and then bumps
-- each affected org's catalog revision once, itself, in the same transaction (same
-- guarantee: a turn that starts after the commit sees the change). While it does, it sets
-- `skillet.revisions_bumped_by_statement` locally, and the row trigger of 0001 stands aside:
-- the WHEN condition is evaluated without calling the function, so the bulk update does not
-- pay one revision upsert per row. Every other writer keeps the row-level behaviour.
create or replace trigger skill_usage_bump_revision_update
after update of state on skill_usage
for each row
when (old.state is distinct from new.state
      and current_setting('skillet.revisions_bumped_by_statement', true) is distinct from 'on')
execute function bump_skill_catalog_revision();

-- skills.curator.next_state, for Postgres to evaluate a whole pass set-wise (the Python
-- function is the reference; tests/integration/test_curator_sql.py holds them equal).
-- Never active (null) is newer than any cutoff; archive first, then stale, then reactivate;
-- cutoffs inclusive. Simple enough for the planner to inline.
create function curator_next_state(
    state text, last_activity_at timestamptz, stale_cutoff timestamptz, archive_cutoff timestamptz
) returns text
language sql immutable parallel safe as $$
    select case
        when last_activity_at is null then
            case when state = 'stale' then 'active' else state end
        when last_activity_at <= archive_cutoff and state <> 'archived' then 'archived'
        when last_activity_at <= stale_cutoff and state = 'active' then 'stale'
        when last_activity_at > stale_cutoff and state = 'stale' then 'active'
        else state
    end
$$;
