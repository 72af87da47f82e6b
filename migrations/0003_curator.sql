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
