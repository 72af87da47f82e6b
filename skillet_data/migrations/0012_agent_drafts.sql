-- Customers talk to the agent; the business decides what the agent knows. What a
-- conversation makes the agent write (skill_manage) is a draft: a skill_versions row like
-- any other, named by a skill_drafts row and by no pointer, so it is never in the index, the
-- matcher or read_skill_reference until a person approves it (which moves the pointer).
-- Per org, `agent_authoring` says whether the agent may write at all ('off'), writes drafts
-- ('review', the default) or moves pointers itself ('auto', the old behaviour, for a bot
-- whose only user is its owner).

alter table organizations add column agent_authoring text not null default 'review'
    check (agent_authoring in ('off', 'review', 'auto'));

create table skill_drafts (
    id               uuid primary key,
    organization_id  uuid not null references organizations (id),
    name             text not null,
    -- The draft's current content; the agent's later edits replace it with a newer version
    -- (every version it went through stays in skill_versions).
    version_id       uuid not null references skill_versions (id),
    -- What the pointer named when the draft began (null: a new skill). Approving is refused
    -- once the pointer moved away from it, so a draft never silently undoes a person's change.
    base_version_id  uuid null references skill_versions (id),
    status           text not null default 'pending'
        check (status in ('pending', 'approved', 'rejected')),
    edits            integer not null default 1 check (edits >= 1),
    conversation_id  uuid null,
    created_at       timestamptz not null default now(),
    updated_at       timestamptz not null default now(),
    decided_at       timestamptz null,
    decided_by       text null,
    check ((status = 'pending') = (decided_at is null))
);
-- One pending draft per skill; decided ones stay for the record.
create unique index skill_drafts_one_pending_idx
    on skill_drafts (organization_id, name) where status = 'pending';
create index skill_drafts_org_idx on skill_drafts (organization_id, status, updated_at desc);

alter table skill_drafts enable row level security;
create policy tenant_isolation on skill_drafts
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- Who changed what an org's agent knows or may do: one row per change, and one per refused
-- attempt (written in a transaction of its own, so a refusal leaves its trace).
create table audit_log (
    id                 bigint generated always as identity primary key,
    organization_id    uuid not null references organizations (id),
    actor              text not null check (length(actor) between 1 and 64),
    action             text not null check (length(action) between 1 and 64),
    outcome            text not null default 'ok' check (outcome in ('ok', 'refused')),
    skill_name         text null,
    before_version_id  uuid null,
    after_version_id   uuid null,
    detail             jsonb not null default '{}'::jsonb,
    created_at         timestamptz not null default now()
);
create index audit_log_org_idx on audit_log (organization_id, id desc);

alter table audit_log enable row level security;
create policy tenant_isolation on audit_log
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());
