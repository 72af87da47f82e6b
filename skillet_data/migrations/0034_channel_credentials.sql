-- Each number's own credentials. A platform hosting many businesses connects each number with
-- the business's own Cloud API access token and WhatsApp Business Account (WABA) id, or a WAHA
-- server and API key of its own; the global SKILLET_WHATSAPP_ACCESS_TOKEN / SKILLET_WAHA_*
-- stay the fallback of a deployment with one business.
--   * channels: what is not secret (the WABA id, the WAHA server's URL), the channel's
--     `status` (`needs_token`: Meta refused its token, sends wait for a new one) and the last
--     four characters of each secret, the only part any listing shows.
--   * channel_secrets: the token and the API key. No role is granted anything on it; they are
--     written through skillet_store_channel_secrets (the API, for the org it is bound to) or
--     by the owner (the CLI), and read only through skillet_channel_secrets, for one number of
--     the bound org, by the worker's send path and the API's verification.

alter table channels
    add column waba_id text null check (waba_id ~ '^[0-9]{1,32}$'),
    add column waha_base_url text null
        check (waha_base_url ~ '^https?://[^[:space:]]+$' and length(waha_base_url) <= 500),
    add column status text not null default 'active'
        check (status in ('active', 'needs_token')),
    add column access_token_last4 text null check (length(access_token_last4) <= 4),
    add column waha_api_key_last4 text null check (length(waha_api_key_last4) <= 4);

create table channel_secrets (
    channel_id      uuid primary key,
    organization_id uuid not null references organizations (id),
    access_token    text null check (length(access_token) between 16 and 4096),
    waha_api_key    text null check (length(waha_api_key) between 1 and 512),
    updated_at      timestamptz not null default now(),
    -- An operator's `skillet channels move` changes the channel's org: its secrets follow.
    foreign key (channel_id, organization_id)
        references channels (id, organization_id) on delete cascade on update cascade
);
alter table channel_secrets enable row level security;
create policy tenant_isolation on channel_secrets
    using (organization_id = skillet_current_org())
    with check (organization_id = skillet_current_org());
create policy system_access on channel_secrets as permissive for all to skillet_system
    using (true) with check (true);
alter table channel_secrets force row level security;
revoke all on channel_secrets from public;

-- A WAHA session's own webhook key follows its channel on a move too.
alter table channel_waha_keys
    drop constraint channel_waha_keys_channel_id_organization_id_fkey,
    add foreign key (channel_id, organization_id)
        references channels (id, organization_id) on delete cascade on update cascade;

-- The API sets a channel's WABA id, WAHA server and the secrets' last four (with the secrets,
-- through the function below), and puts a `needs_token` channel back to active with a new
-- token; the worker marks a channel whose token Meta refused.
grant update (waba_id, waha_base_url, status, access_token_last4, waha_api_key_last4)
    on channels to skillet_api;
grant update (status) on channels to skillet_worker;

-- One number's own secrets, for the org the session is bound to only (no row: the number has
-- none, or is not this org's). SECURITY DEFINER: it reads past the table's missing grants, and
-- only ever the row of the number it is given, of the bound org.
create function skillet_channel_secrets(p_kind text, p_address text)
returns table (access_token text, waha_api_key text)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select s.access_token, s.waha_api_key
    from public.channels c
    join public.channel_secrets s on s.channel_id = c.id
    where c.kind = p_kind and c.address = p_address
      and c.organization_id = (select public.skillet_current_org())
$$;
revoke all on function skillet_channel_secrets(text, text) from public;
grant execute on function skillet_channel_secrets(text, text) to skillet_worker, skillet_api;

-- Store a channel's own token and/or WAHA API key (null: keep the one it has), for a channel
-- of the bound org only; false when the channel is not that org's.
create function skillet_store_channel_secrets(
    p_channel uuid, p_access_token text, p_waha_api_key text)
returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_org uuid;
begin
    select c.organization_id into v_org from public.channels c
    where c.id = p_channel and c.organization_id = (select public.skillet_current_org());
    if v_org is null then
        return false;
    end if;
    insert into public.channel_secrets as s (channel_id, organization_id, access_token,
                                             waha_api_key)
    values (p_channel, v_org, p_access_token, p_waha_api_key)
    on conflict (channel_id) do update set
        access_token = coalesce(excluded.access_token, s.access_token),
        waha_api_key = coalesce(excluded.waha_api_key, s.waha_api_key),
        updated_at = now();
    return true;
end;
$$;
revoke all on function skillet_store_channel_secrets(uuid, text, text) from public;
grant execute on function skillet_store_channel_secrets(uuid, text, text) to skillet_api;

-- Replies that wait for a `needs_token` channel's new token (pending, not claimed, routed to
-- it as skillet_claim_outbox routes them) fail once their customer-service window has closed:
-- WhatsApp would refuse them as free-form messages anyway.
create function skillet_fail_parked_outside_window(p_window_s double precision)
returns table (id uuid, organization_id uuid)
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    with parked as (
        select o.id
        from public.outbox o
        join public.messages r on r.id = o.message_id
        left join public.messages i on i.id = r.reply_to_id
        join lateral (
            select * from (
                select ch.status, 0 as preference
                from public.inbound_routes ir join public.channels ch on ch.id = ir.channel_id
                where ir.organization_id = o.organization_id and ir.external_id = i.external_id
                union all
                select ch.status, 1 from public.channels ch
                where ch.organization_id = o.organization_id
                  and (select count(*) from public.channels n
                       where n.organization_id = o.organization_id) = 1
            ) candidates order by preference limit 1
        ) route on true
        where o.status = 'pending' and o.delivery_claimed_at is null
          and route.status = 'needs_token'
          and (select max(m.sent_at) from public.messages m
               where m.conversation_id = o.conversation_id and m.direction = 'inbound')
              < now() - make_interval(secs => p_window_s)
    )
    update public.outbox o set
        status = 'failed',
        attempts = o.attempts + 1,
        last_error = 'outside_service_window: the channel waited for a new access token '
            || 'until the customer-service window closed; only templates may be sent now'
    from parked p
    where o.id = p.id and o.status = 'pending'
    returning o.id, o.organization_id
$$;
revoke all on function skillet_fail_parked_outside_window(double precision) from public;
grant execute on function skillet_fail_parked_outside_window(double precision)
    to skillet_worker;

comment on function skillet_channel_secrets(text, text) is $$One number's own Cloud API access
token and WAHA API key, for a channel of the bound org only (no row otherwise); the worker's
send path and the API's verification read them, no listing ever does.$$;
comment on function skillet_store_channel_secrets(uuid, text, text) is $$Store a channel's own
access token and/or WAHA API key (null keeps the stored one) for a channel of the bound org;
false when the channel is not that org's. The API's only way to write them.$$;
comment on function skillet_fail_parked_outside_window(double precision) is $$Fail as
outside_service_window the replies waiting for a needs_token channel's new token whose
customer last wrote more than p_window_s ago (the outbox sweep); (id, org) of each.$$;
