-- A tenant binding that an injected statement cannot forge. Until now the org a session saw
-- was whatever `skillet.organization_id` said, and any login could set it: one
-- `select set_config('skillet.organization_id', '<other org>', false)` opened another org.
-- From here on the binding carries a proof, `skillet.organization_proof` = hex
-- HMAC-SHA256(secret, org id as text), under a secret the login roles cannot read
-- (skillet_private.tenant_binding_secret, the owner's only). The processes hold the same
-- secret (SKILLET_TENANT_SECRET; core/tenant_key.py) and compute the proof themselves.
--   * skillet_current_org() returns the bound org only when its proof holds, else null; the
--     policies call it as `(select skillet_current_org())`, an InitPlan evaluated once per
--     statement, not per row.
--   * skillet_bind_org(p_org) (the turn's functions bind with it, migration 0021) refuses an
--     org whose proof is not in the session (error 42501, `tenant_binding_refused`), and the
--     turn's three statements take the proof as an argument (new overloads below), so the
--     turn still binds inside its own statements: no round trip added.
--   * The webhook no longer reads any WAHA key: skillet_waha_signature_valid answers whether
--     a body's signature holds under its session's key (skillet_waha_channel_key is the
--     owner's only now).
-- Workers of the previous release bind without a proof and see no org row after this
-- migration: deploy it with the new code (`skillet migrate`, then restart every process).

-- HMAC from the built-in sha256()/sha512() (RFC 2104), not pgcrypto: a server without
-- contrib (the embedded development wheel) runs it too. A key's pads, (key XOR 0x36..) and
-- (key XOR 0x5c..) over the hash's block, are all the hash needs of it.
create function skillet_hmac_pad(p_key bytea, p_block integer, p_byte integer) returns bytea
language plpgsql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
declare
    v_key bytea := p_key;
begin
    if length(v_key) > p_block then  -- a longer key is its digest (RFC 2104)
        v_key := case p_block when 64 then sha256(v_key) else sha512(v_key) end;
    end if;
    v_key := v_key || decode(repeat('00', p_block - length(v_key)), 'hex');
    for i in 0 .. p_block - 1 loop
        v_key := set_byte(v_key, i, get_byte(v_key, i) # p_byte);
    end loop;
    return v_key;
end;
$$;

create function skillet_hmac_sha512(p_key bytea, p_message bytea) returns bytea
language sql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
    select sha512(public.skillet_hmac_pad(p_key, 128, 92)
                  || sha512(public.skillet_hmac_pad(p_key, 128, 54) || p_message))
$$;

create schema if not exists skillet_private;
revoke all on schema skillet_private from public;

create table skillet_private.tenant_binding_secret (
    id         boolean primary key default true check (id),  -- one row
    secret     bytea not null check (length(secret) >= 32),
    -- The HMAC-SHA256 pads of the secret, kept beside it: a proof check is then two sha256()
    -- calls, once per statement.
    inner_pad  bytea generated always as (public.skillet_hmac_pad(secret, 64, 54)) stored,
    outer_pad  bytea generated always as (public.skillet_hmac_pad(secret, 64, 92)) stored,
    updated_at timestamptz not null default now()
);
revoke all on skillet_private.tenant_binding_secret from public;
-- A random secret until `skillet migrate` stores SKILLET_TENANT_SECRET: processes whose
-- login may read this table (the owner's, in development) take it from here.
insert into skillet_private.tenant_binding_secret (secret)
values (uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()));  -- 244 random bits

-- Whether p_proof is the proof of p_org. Answers only yes or no: nobody learns a proof from
-- it, nor the secret.
create function skillet_org_proof_valid(p_org text, p_proof text) returns boolean
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    return p_proof is not null and p_proof = (
        select encode(sha256(s.outer_pad || sha256(s.inner_pad || convert_to(p_org, 'UTF8'))),
                      'hex')
        from skillet_private.tenant_binding_secret s);
end;
$$;

create or replace function skillet_current_org() returns uuid
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_org text := current_setting('skillet.organization_id', true);
begin
    if coalesce(v_org, '') = '' then
        return null;
    end if;
    if current_setting('skillet.organization_proof', true) = (
        select encode(sha256(s.outer_pad || sha256(s.inner_pad || convert_to(v_org, 'UTF8'))),
                      'hex')
        from skillet_private.tenant_binding_secret s) then
        return v_org::uuid;
    end if;
    return null;
end;
$$;

-- Every policy that asks for the current org asks once per statement.
do $$
declare
    p record;
    v_qual text;
    v_check text;
begin
    for p in
        select tablename, policyname, qual, with_check from pg_policies
        where schemaname = 'public'
          and (qual like '%skillet_current_org()%' or with_check like '%skillet_current_org()%')
    loop
        v_qual := replace(p.qual, 'skillet_current_org()', '(select skillet_current_org())');
        v_check := replace(p.with_check, 'skillet_current_org()',
                           '(select skillet_current_org())');
        if v_qual is not null then
            execute format('alter policy %I on %I using (%s)', p.policyname, p.tablename,
                           v_qual);
        end if;
        if v_check is not null then
            execute format('alter policy %I on %I with check (%s)', p.policyname, p.tablename,
                           v_check);
        end if;
    end loop;
end
$$;

-- The turn's binding (0021, 0023): only the org whose proof the transaction or session
-- carries. Set by hand, the org alone opened nothing already (the policies check the proof);
-- refused here, a forged call fails loudly instead of answering "nothing there".
create or replace function skillet_bind_org(p_org uuid) returns void
language plpgsql as $$
begin
    -- skillet_system (the owner, the operator's commands) sees every org anyway: no proof.
    if not skillet_is_system()
       and not skillet_org_proof_valid(p_org::text,
                                       current_setting('skillet.organization_proof', true)) then
        raise exception 'tenant_binding_refused: no valid proof for organization %', p_org
            using errcode = '42501';
    end if;
    perform set_config('skillet.organization_id', p_org::text, true);
end;
$$;

-- The turn's three statements with their org's proof (the proof comes second, and every
-- overload has an arity of its own, so a call never needs a cast to pick one). Each sets the
-- proof transaction-locally and runs 0021's function, whose skillet_bind_org checks it.
create function skillet_take_conversation(
    p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_ttl_s double precision,
    p_limit integer, p_history_limit integer
) returns table (
    channel text, contact_id text, undelivered boolean,
    ids uuid[], external_ids text[], bodies text[], received_ats timestamptz[],
    expects_replies boolean[], agent_ids uuid[],
    agent_id uuid, system_prompt text, model_provider text, model_name text,
    catalog_revision bigint, history_directions text[], history_bodies text[]
)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    return query
    select * from skillet_take_conversation(p_org, p_conversation, p_lease, p_ttl_s, p_limit,
                                            p_history_limit);
end;
$$;

create function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text,
    p_used text[], p_viewed text[], p_names text[], p_triggers text[],
    p_at timestamptz, p_lease uuid, p_usage jsonb, p_claim boolean
) returns table (
    outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
    reply_to_external_id text, last_inbound_at timestamptz, route_kind text, route_address text
)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    return query
    select * from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch,
                                      p_first_received, p_body, p_used, p_viewed, p_names,
                                      p_triggers, p_at, p_lease, p_usage, p_claim);
end;
$$;

create function skillet_continue_conversation(
    p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_sent uuid,
    p_provider_ids text[], p_limit integer, p_history_limit integer
) returns table (
    sent boolean, held boolean, released boolean,
    ids uuid[], external_ids text[], bodies text[], received_ats timestamptz[],
    expects_replies boolean[], agent_ids uuid[],
    agent_id uuid, system_prompt text, model_provider text, model_name text,
    catalog_revision bigint, history_directions text[], history_bodies text[]
)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    return query
    select * from skillet_continue_conversation(p_org, p_conversation, p_lease, p_sent,
                                                p_provider_ids, p_limit, p_history_limit);
end;
$$;

-- WAHA: whether `p_signature` (hex, lower case) is HMAC-SHA512 of `p_body` under the key of
-- the channel of session `p_session`; null when that channel has no key of its own (or no
-- WAHA channel has that session): the caller then checks the global key. The key itself never
-- leaves the database.
create function skillet_waha_signature_valid(p_session text, p_body bytea, p_signature text)
returns boolean
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    -- Compared as digests of both: the time a comparison takes tells nothing of the key.
    return (
        select sha256(convert_to(
                   encode(public.skillet_hmac_sha512(convert_to(k.hmac_key, 'UTF8'), p_body),
                          'hex'), 'UTF8'))
               = sha256(convert_to(p_signature, 'UTF8'))
        from public.channels c
        join public.channel_waha_keys k on k.channel_id = c.id
        where c.kind = 'waha' and c.address = p_session);
end;
$$;
revoke all on function skillet_waha_signature_valid(text, bytea, text) from public;
grant execute on function skillet_waha_signature_valid(text, bytea, text) to skillet_webhook;
revoke execute on function skillet_waha_channel_key(text) from skillet_webhook, skillet_app;

comment on function skillet_hmac_pad(bytea, integer, integer) is $$An HMAC key's pad over a
hash block of p_block bytes: the key (its digest when longer) zero-filled, each byte XOR
p_byte (54: inner, 92: outer). Immutable: the tenant secret's pads are generated columns.$$;
comment on function skillet_hmac_sha512(bytea, bytea) is $$HMAC-SHA512 of p_message under
p_key (RFC 2104) from the built-in sha512(); WAHA signs its webhook bodies with it.$$;
comment on function skillet_current_org() is $$The org the current statement acts for: the
bound org (skillet.organization_id) only when its proof (skillet.organization_proof) holds,
else null. Policies call it as (select skillet_current_org()), once per statement.$$;
comment on function skillet_org_proof_valid(text, text) is $$Whether p_proof is the HMAC-SHA256
of p_org under the tenant secret; answers yes or no, never a proof or the secret.$$;
comment on function skillet_bind_org(uuid) is $$Bind an org for the rest of the transaction;
refused (42501, tenant_binding_refused) unless the session or transaction holds its proof
(members of skillet_system, who see every org, need none).$$;
comment on function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer, integer) is $$The turn's take with the org's proof: sets the proof
for the transaction and takes as skillet_take_conversation(uuid, uuid, ...) does.$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamptz, text, text[], text[], text[], text[], timestamptz, uuid, jsonb, boolean) is $$The
turn's reply commit with the org's proof: sets the proof for the transaction and commits as
skillet_commit_turn(uuid, uuid, ...) does.$$;
comment on function skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer, integer) is $$The turn's continue with the org's proof: sets the
proof for the transaction and continues as skillet_continue_conversation(uuid, uuid, ...) does.$$;
comment on function skillet_waha_signature_valid(text, bytea, text) is $$Whether a WAHA event
body's signature holds under its session's own key (null: the session has no key of its own,
the webhook checks the global one); the webhook's login never reads a key.$$;
