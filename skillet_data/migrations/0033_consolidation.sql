-- The sleep cycle's other two operations (skills/consolidation): associate and distill what
-- the agent wrote. Nothing here is authoritative skill data:
--   skill_links              an overlay of similar pairs of an org's skills (score, backend,
--                            the two versions it was measured on); recomputed when either
--                            skill gets a new version, never copied into skill_versions;
--   skill_proposals          a distillation a person decides: the umbrella's proposed version
--                            (a skill_versions row no pointer names, like a draft) and its
--                            members, each with the version it was made from;
--   skill_proposal_members   one row per member; a skill is in at most one pending proposal
--                            (the partial unique index);
--   org_consolidation        the per-org watermark (when it last consolidated) and the
--                            last report.
-- organizations.consolidation is the opt-in ('off' by default, 'review'), skill_usage.
-- absorbed_into names the umbrella an archived skill went into, curator_runs.consolidation
-- what the consolidation did after that run's decay pass (or why it skipped).

alter table organizations add column consolidation text not null default 'off'
    check (consolidation in ('off', 'review'));

alter table skill_usage add column absorbed_into text null;

alter table curator_runs add column consolidation jsonb null;

create table skill_links (
    organization_id uuid not null references organizations (id),
    a               text not null,
    b               text not null,
    a_version_id    uuid not null references skill_versions (id),
    b_version_id    uuid not null references skill_versions (id),
    score           real not null check (score > 0 and score <= 1),
    backend         text not null check (backend in ('lexical', 'embeddings')),
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now(),
    check (a collate "C" < b collate "C"),  -- one row per pair, whatever order it was found in
    primary key (organization_id, backend, a, b)
);

create table skill_proposals (
    id                 uuid primary key,
    organization_id    uuid not null references organizations (id),
    umbrella           text not null,
    version_id         uuid not null references skill_versions (id),  -- the proposed umbrella
    backend            text not null check (backend in ('lexical', 'embeddings')),
    status             text not null default 'pending'
        check (status in ('pending', 'approved', 'rejected', 'expired')),
    index_bytes_before integer not null check (index_bytes_before >= 0),
    index_bytes_after  integer not null check (index_bytes_after >= 0),
    created_at         timestamptz not null default now(),
    decided_at         timestamptz null,
    decided_by         text null,
    expired_reason     text null,
    check ((status = 'pending') = (decided_at is null))
);
create index skill_proposals_org_idx on skill_proposals (organization_id, status, created_at desc);

create table skill_proposal_members (
    proposal_id     uuid not null references skill_proposals (id),
    organization_id uuid not null references organizations (id),
    name            text not null,
    role            text not null check (role in ('umbrella', 'absorbed')),
    version_id      uuid not null references skill_versions (id),  -- installed when proposed
    uses_30d        bigint not null default 0,
    score           real null,  -- the link to the umbrella (null for the umbrella itself)
    pending         boolean not null default true,
    primary key (proposal_id, name)
);
create unique index skill_proposal_members_one_pending_idx
    on skill_proposal_members (organization_id, name) where pending;

create table org_consolidation (
    organization_id uuid primary key references organizations (id),
    consolidated_at timestamptz not null,
    report          jsonb not null
);

do $$
declare
    t text;
begin
    foreach t in array array['skill_links', 'skill_proposals', 'skill_proposal_members',
                             'org_consolidation'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format(
            'create policy tenant_isolation on %I
                 using (organization_id = (select skillet_current_org()))
                 with check (organization_id = (select skillet_current_org()))', t);
        execute format(
            'create policy system_access on %I as permissive for all to skillet_system
                 using (true) with check (true)', t);
    end loop;
end
$$;

revoke all on skill_links, skill_proposals, skill_proposal_members, org_consolidation
    from public;
-- The worker's curator tick associates and proposes for one bound org at a time; the API
-- reads all of it and decides proposals (approve: pointer, usage and audit rows, granted
-- already), and may set the opt-in.
grant select, insert, update, delete on skill_links to skillet_worker;
grant select, insert, update on skill_proposals, skill_proposal_members, org_consolidation
    to skillet_worker;
grant select (id, organization_id), update (consolidation) on curator_runs to skillet_worker;
grant select on skill_links, skill_proposals, skill_proposal_members, org_consolidation
    to skillet_api;
grant update on skill_proposals, skill_proposal_members to skillet_api;
grant update (consolidation) on organizations to skillet_api;
