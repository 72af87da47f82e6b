-- Per-channel WAHA webhook keys: each WAHA session signs its events (X-Webhook-Hmac) with a
-- key of its own, so one tenant's key can never sign another tenant's events. The global
-- SKILLET_WAHA_HMAC_KEY stays only as the fallback for channels without a key here.
--
-- Nobody but the owner reads this table: the webhook asks `skillet_waha_channel_key` for the
-- one session an event names, and gets that channel's org and key only. HMAC needs the key
-- itself (a hash of it could not verify a signature), so the key is stored, never shown.

-- The key's org must be its channel's org: the composite reference below holds them equal.
alter table channels add constraint channels_id_organization_key unique (id, organization_id);

create table channel_waha_keys (
    channel_id      uuid primary key,
    organization_id uuid not null references organizations (id),
    hmac_key        text not null check (length(hmac_key) between 16 and 512),
    updated_at      timestamptz not null default now(),
    foreign key (channel_id, organization_id)
        references channels (id, organization_id) on delete cascade
);

-- Row-level security like every org-scoped table (migration 0006), and on top of it no
-- privilege at all for the application role: not even its own org's keys are readable.
alter table channel_waha_keys enable row level security;
create policy tenant_isolation on channel_waha_keys
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());
revoke all on channel_waha_keys from skillet_app;

-- One WAHA session's org and key (null: no key of its own, use the global fallback); no row
-- when no WAHA channel has that session. SECURITY DEFINER: it runs as the owner, so it reads
-- past the policy above, and it can only ever return the row of the session it is given.
create function skillet_waha_channel_key(p_session text)
returns table (organization_id uuid, hmac_key text)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select c.organization_id, k.hmac_key
    from public.channels c
    left join public.channel_waha_keys k on k.channel_id = c.id
    where c.kind = 'waha' and c.address = p_session
$$;
revoke all on function skillet_waha_channel_key(text) from public;
grant execute on function skillet_waha_channel_key(text) to skillet_app;
