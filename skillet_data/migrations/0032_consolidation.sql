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

-- Forgetting by disuse, per file: each read_skill_reference read, counted by the reply's commit
-- (in its transaction, beside the skill's view), never in a skill version. An approved merge
-- copies an absorbed skill's counts to the paths its files moved to.
create table skill_file_reads (
    organization_id uuid not null references organizations (id),
    skill_name      text not null,
    path            text not null check (length(path) between 1 and 255),
    read_count      bigint not null default 0,
    last_read_at    timestamptz not null,
    primary key (organization_id, skill_name, path)
);
alter table skill_file_reads enable row level security;
alter table skill_file_reads force row level security;
create policy tenant_isolation on skill_file_reads
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on skill_file_reads as permissive for all to skillet_system
    using (true) with check (true);
revoke all on skill_file_reads from public;
grant select, insert, update on skill_file_reads to skillet_worker, skillet_api;

-- Add one read per (skill, path) element of p_reads ([{"skill", "path"}]) for the bound org,
-- stamped p_at; rows taken in (skill, path) order, so concurrent commits lock alike.
create function skillet_bump_file_reads(p_org uuid, p_reads jsonb, p_at timestamptz)
returns void
-- plpgsql, as its caller (row-level security): on the turn's path, planned once a session.
language plpgsql volatile
as $$
begin
    insert into skill_file_reads as r (organization_id, skill_name, path, read_count,
                                       last_read_at)
    select p_org, x.skill, x.path, count(*), p_at
    from jsonb_to_recordset(p_reads) as x(skill text, path text)
    where x.skill is not null and x.path is not null and length(x.path) between 1 and 255
    group by x.skill, x.path
    order by x.skill, x.path
    on conflict (organization_id, skill_name, path) do update
    set read_count = r.read_count + excluded.read_count,
        last_read_at = greatest(r.last_read_at, excluded.last_read_at);
end;
$$;
comment on function skillet_bump_file_reads(uuid, jsonb, timestamptz) is $$Count the turn's
read_skill_reference reads per (skill, path) for p_org (p_reads: [{"skill", "path"}]), at
p_at; called by the reply's commit.$$;

-- The reply commit with the org's proof and the turn's file reads: commits as the
-- eighteen-argument skillet_commit_turn does and, when it replied, counts the reads.
create function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb, p_reads jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    for outcome, outbox_id, reply_id, deliverable, reply_to_external_id, last_inbound_at,
        route_kind, route_address in
        select * from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch,
                                          p_first_received, p_body, p_used, p_viewed, p_names,
                                          p_triggers, p_at, p_lease, p_usage, p_claim,
                                          p_handoff_cause, p_handoff_reason, p_skills)
    loop
        if outcome = 'replied' and jsonb_typeof(p_reads) = 'array'
           and jsonb_array_length(p_reads) > 0 then
            perform skillet_bump_file_reads(p_org, p_reads, p_at);
        end if;
        return next;
    end loop;
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text,
    text, jsonb, jsonb) is
$$The turn's reply commit with the org's proof, a handoff, the skills used and the files read:
commits as skillet_commit_turn(uuid, text, ..., text, text, jsonb) does and, when it replied,
counts p_reads ([{"skill", "path"}]) with skillet_bump_file_reads.$$;
