-- The business's own surface: org-scoped API keys for the admin HTTP API (`skillet api`),
-- and dead letters an org can see and requeue.
--
-- A key is shown once and stored only as sha256 of the whole key (it carries 256 random
-- bits, so a slow password hash would add nothing but CPU on every request). It is known by
-- its short visible prefix. Looking a key up happens before any org is known, so it goes
-- through one narrow security-definer function; everything after runs as skillet_app bound
-- to the key's org, under row-level security, and never reads a hash.

create table api_keys (
    id              uuid primary key,
    organization_id uuid not null references organizations (id),
    prefix          text not null unique check (prefix ~ '^skt_[a-z0-9]{8}$'),
    key_hash        bytea not null check (length(key_hash) = 32),
    role            text not null check (role in ('viewer', 'editor', 'admin')),
    name            text null check (length(name) between 1 and 100),
    created_at      timestamptz not null default now(),
    revoked_at      timestamptz null,
    last_used_at    timestamptz null
);
create index api_keys_org_idx on api_keys (organization_id, created_at, id);

alter table api_keys enable row level security;
create policy tenant_isolation on api_keys
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- The API's role reads every column but the hash, writes a hash only when creating a key,
-- and changes nothing but the revocation stamp.
revoke all on api_keys from skillet_app;
grant select (id, organization_id, prefix, role, name, created_at, revoked_at, last_used_at)
    on api_keys to skillet_app;
grant insert (id, organization_id, prefix, key_hash, role, name) on api_keys to skillet_app;
grant update (revoked_at) on api_keys to skillet_app;

-- The one way in before an org is known: a live key's org, role and id for (prefix, hash),
-- or no row. Owned by the migration's role (the table owner, to whom row-level security does
-- not apply); search_path pinned so nobody's objects can stand in for ours. Stamps
-- last_used_at at most once a minute per key, so a busy key does not write on every request.
create function skillet_api_key_lookup(p_prefix text, p_hash bytea)
returns table (organization_id uuid, role text, key_id uuid)
language plpgsql volatile security definer
set search_path = public, pg_temp
as $$
#variable_conflict use_column
begin
    return query
        select k.organization_id, k.role, k.id from api_keys k
        where k.prefix = p_prefix and k.key_hash = p_hash and k.revoked_at is null;
    if found then
        update api_keys k set last_used_at = now()
        where k.prefix = p_prefix
          and (k.last_used_at is null or k.last_used_at < now() - interval '1 minute');
    end if;
end;
$$;
revoke all on function skillet_api_key_lookup(text, bytea) from public;
grant execute on function skillet_api_key_lookup(text, bytea) to skillet_app;

-- Dead letters of a job whose payload named its org carry it (jobs/inbound.py), so that org
-- can list and requeue its own; rows without one stay system-only (policy of 0006).
alter table dead_letters add column organization_id uuid null;
alter table dead_letters add column requeued_at timestamptz null;
create index dead_letters_org_idx on dead_letters (organization_id, id)
    where organization_id is not null;

create policy org_read on dead_letters for select
    using (organization_id = skillet_current_org());
create policy org_requeue on dead_letters for update
    using (organization_id = skillet_current_org())
    with check (organization_id = skillet_current_org());

-- An org's admin key changes the org's own settings (today `agent_authoring`) and nothing
-- else of its row; 0006's policy lets only system work write organizations.
create policy org_settings on organizations for update
    using (id = skillet_current_org())
    with check (id = skillet_current_org());
revoke update on organizations from skillet_app;
grant update (agent_authoring) on organizations to skillet_app;
