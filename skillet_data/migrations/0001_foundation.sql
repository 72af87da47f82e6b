-- Foundation schema: tenants, skills (immutable versions + pointers), usage,
-- activations, conversations, messages and the reply outbox.

create table organizations (
    id          uuid primary key default gen_random_uuid(),
    name        text not null check (length(name) between 1 and 200),
    created_at  timestamptz not null default now()
);

create table agents (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    name            text not null,
    system_prompt   text not null,
    created_at      timestamptz not null default now()
);
create index agents_organization_idx on agents (organization_id, created_at);

create table skill_versions (
    id                     uuid primary key default gen_random_uuid(),
    organization_id        uuid null references organizations (id),  -- null = platform catalog
    name                   text not null check (name ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(name) <= 64),
    description            text not null,
    body                   text not null,
    matcher                jsonb not null default '{}'::jsonb,
    manifest               jsonb not null default '[]'::jsonb,
    forked_from_version_id uuid null references skill_versions (id),
    created_by             text not null check (created_by in ('user', 'agent', 'platform')),
    content_sha256         text null,
    created_at             timestamptz not null default now()
);
create index skill_versions_org_name_idx on skill_versions (organization_id, name, created_at);

create table skill_pointers (
    organization_id uuid null references organizations (id),
    name            text not null,
    version_id      uuid not null references skill_versions (id),
    updated_at      timestamptz not null default now(),
    constraint skill_pointers_org_name_key unique nulls not distinct (organization_id, name)
);

create table skill_usage (
    organization_id  uuid not null references organizations (id),
    skill_name       text not null,
    created_by       text not null default 'user',
    use_count        bigint not null default 0,
    view_count       bigint not null default 0,
    patch_count      bigint not null default 0,
    last_used_at     timestamptz null,
    last_viewed_at   timestamptz null,
    last_patched_at  timestamptz null,
    last_activity_at timestamptz null,
    state            text not null default 'active' check (state in ('active', 'stale', 'archived')),
    pinned           boolean not null default false,
    archived_at      timestamptz null,
    created_at       timestamptz not null default now(),
    primary key (organization_id, skill_name)
);

create table skill_activations (
    id               bigint generated always as identity primary key,
    organization_id  uuid not null,
    skill_name       text not null,
    skill_version_id uuid null,
    trigger          text not null check (trigger in ('hard', 'probe')),
    job_id           text null,
    created_at       timestamptz not null default now()
);
create index skill_activations_org_idx on skill_activations (organization_id, created_at);

-- Bumped on every change to what an org's agent loads, so each worker's in-memory
-- skill cache can validate itself with one primary-key read per turn.
create table skill_catalog_revisions (
    organization_id uuid primary key,
    revision        bigint not null default 1
);

create function bump_skill_catalog_revision() returns trigger
language plpgsql as $$
declare
    org uuid;
begin
    if tg_op = 'DELETE' then
        org := old.organization_id;
    else
        org := new.organization_id;
    end if;
    if org is not null then
        insert into skill_catalog_revisions as r (organization_id) values (org)
        on conflict (organization_id) do update set revision = r.revision + 1;
    end if;
    if tg_op = 'UPDATE' and old.organization_id is distinct from new.organization_id
       and old.organization_id is not null then
        insert into skill_catalog_revisions as r (organization_id) values (old.organization_id)
        on conflict (organization_id) do update set revision = r.revision + 1;
    end if;
    return null;
end;
$$;

create trigger skill_pointers_bump_revision
after insert or update or delete on skill_pointers
for each row execute function bump_skill_catalog_revision();

-- Usage rows matter to the loader only through `state` (archived skills are not loaded):
-- counter updates and first-use inserts of active skills must not invalidate caches.
create trigger skill_usage_bump_revision_insert
after insert on skill_usage
for each row when (new.state = 'archived') execute function bump_skill_catalog_revision();

create trigger skill_usage_bump_revision_delete
after delete on skill_usage
for each row when (old.state = 'archived') execute function bump_skill_catalog_revision();

create trigger skill_usage_bump_revision_update
after update of state on skill_usage
for each row when (old.state is distinct from new.state)
execute function bump_skill_catalog_revision();

create table conversations (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    channel         text not null,
    contact_id      text not null,
    created_at      timestamptz not null default now(),
    unique (organization_id, channel, contact_id)
);

create table messages (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    conversation_id uuid not null references conversations (id),
    direction       text not null check (direction in ('inbound', 'outbound')),
    channel         text not null,
    external_id     text null,
    body            text not null,
    sent_at         timestamptz null,
    reply_to_id     uuid null references messages (id),
    created_at      timestamptz not null default now()
);
create unique index messages_inbound_external_key
    on messages (organization_id, channel, external_id) where direction = 'inbound';
-- One reply per inbound message, whatever runs the turn twice.
create unique index messages_one_reply_key on messages (reply_to_id) where direction = 'outbound';
create index messages_conversation_idx on messages (conversation_id, created_at);

create table outbox (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    conversation_id uuid not null references conversations (id),
    message_id      uuid not null unique references messages (id),
    body            text not null,
    status          text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
    attempts        integer not null default 0,
    last_error      text null,
    created_at      timestamptz not null default now(),
    sent_at         timestamptz null
);
create index outbox_pending_idx on outbox (created_at) where status = 'pending';

-- Jobs that failed for good (bad payload, unknown org, retries exhausted): kept, never lost.
create table dead_letters (
    id          bigint generated always as identity primary key,
    job_id      text not null,
    function    text not null,
    payload     jsonb not null,
    error_code  text not null,
    error       text not null,
    tries       integer not null,
    created_at  timestamptz not null default now()
);
create index dead_letters_created_idx on dead_letters (created_at);
