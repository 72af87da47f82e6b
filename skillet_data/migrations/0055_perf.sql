-- The turn's cost back: the tenant check once per statement of the turn, not once per table
-- of every statement inside it.
--
-- Every tenant_isolation policy asks `(select skillet_current_org())`, which recomputed the
-- binding's HMAC (a PL/pgSQL call and a read of the secret) once per statement and per table
-- it touches: about 40 times for one turn, whose three statements are functions that run a
-- dozen statements each. The binding was already checked once, at the entry of each of those
-- three (skillet_bind_org with the org's proof).
--
-- Now those three run as a role of their own, skillet_bound (SECURITY DEFINER, NOLOGIN, no
-- member but the owner): the first thing each does is skillet_bind_org, which refuses an org
-- without its proof and binds it for the transaction. Inside them (current_user =
-- skillet_bound, and nowhere else) skillet_current_org() trusts the bound org without
-- recomputing its proof; everywhere else it checks the proof as before
-- (skillet_proven_org). An injected statement cannot run as skillet_bound: no login is a
-- member and SET ROLE to it is refused; it can only call the three functions, which bind the
-- org they are given only with that org's proof, before they read anything, over whatever
-- the session set by hand. tests/integration/test_tenant_binding.py holds both.
-- skillet_current_org is now a SQL function, so the planner inlines it into each policy's
-- InitPlan: the check costs a comparison and a setting's read, not a function call.

do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'skillet_bound') then
        begin
            create role skillet_bound nologin;
        exception when duplicate_object or unique_violation then
            null;  -- roles are per cluster: a migration of another database made it first
        end;
    end if;
end
$$;
-- What the turn's statements may touch: the worker's grants, nothing more.
grant skillet_worker to skillet_bound;
-- The owner hands it the three functions (ALTER ... OWNER needs the membership).
grant skillet_bound to current_user;

-- The proof check of a session's binding (the body skillet_current_org had until now).
create function skillet_proven_org() returns uuid
language plpgsql stable security definer
as $$
declare
    v_org pg_catalog.text := pg_catalog.current_setting('skillet.organization_id', true);
begin
    if v_org is null or v_org OPERATOR(pg_catalog.=) '' then
        return null;
    end if;
    if pg_catalog.current_setting('skillet.organization_proof', true) OPERATOR(pg_catalog.=) (
        select pg_catalog.encode(
                   pg_catalog.sha256(s.outer_pad OPERATOR(pg_catalog.||) pg_catalog.sha256(
                       s.inner_pad OPERATOR(pg_catalog.||) pg_catalog.convert_to(v_org, 'UTF8'))),
                   'hex')
        from skillet_private.tenant_binding_secret s) then
        return v_org::pg_catalog.uuid;
    end if;
    return null;
end;
$$;

-- Same name and signature (the policies call it by oid); invoker and SQL now, so inlined.
create or replace function skillet_current_org() returns uuid
language sql stable security invoker
as $$
    select case when current_user = 'skillet_bound'
                then nullif(current_setting('skillet.organization_id', true), '')::uuid
                else public.skillet_proven_org() end
$$;

-- Refused as before without the org's proof; a null org too (it bound nothing, silently).
-- Inside the turn's functions the caller's role is out of sight (current_user is
-- skillet_bound): a login that may see every org anyway (the owner's, in development and the
-- operator's commands) still binds without a proof there.
create or replace function skillet_bind_org(p_org uuid, p_proof text) returns void
language plpgsql as $$
begin
    if p_org is null
       or not (skillet_org_proof_valid(p_org::text, p_proof) or skillet_is_system()
               or pg_has_role(session_user, 'skillet_system', 'USAGE')) then
        raise exception 'tenant_binding_refused: no valid proof for organization %', p_org
            using errcode = '42501';
    end if;
    perform set_config('skillet.organization_proof', p_proof, true),
            set_config('skillet.organization_id', p_org::text, true);
end;
$$;

-- The turn's three statements run as skillet_bound. The owner change needs CREATE on the
-- schema for the new owner at that moment only.
grant create on schema public to skillet_bound;
do $$
declare
    f regprocedure;
begin
    foreach f in array array[
        'skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer, integer)',
        'skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text,
            text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean,
            text, text, jsonb, jsonb, jsonb)',
        'skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer,
            integer)']::regprocedure[]
    loop
        execute format('alter function %s security definer', f);
        execute format('alter function %s set search_path = public, pg_catalog, pg_temp', f);
        execute format('alter function %s owner to skillet_bound', f);
        execute format('revoke all on function %s from public', f);
        execute format('grant execute on function %s to skillet_worker', f);
    end loop;
end
$$;
revoke create on schema public from skillet_bound;

comment on function skillet_current_org() is
$$The org the current statement acts for, or null. Inside the turn's functions (current_user
skillet_bound: skillet_take_conversation, skillet_commit_turn, skillet_continue_conversation,
each of which binds its org with the org's proof before anything else) the org they bound;
anywhere else the bound org (skillet.organization_id) only when its proof
(skillet.organization_proof) holds (skillet_proven_org). Policies call it as (select
skillet_current_org()), once per statement; a SQL function, inlined there.$$;
comment on function skillet_proven_org() is
$$The session's bound org (skillet.organization_id) when its proof (skillet.organization_proof)
holds, else null: skillet_current_org outside the turn's functions. SECURITY DEFINER with every
name schema-qualified (no search_path pin: it would cost as much as the check).$$;
comment on function skillet_bind_org(uuid, text) is
$$Bind an org and its proof for the rest of the transaction, in one call; refused (42501,
tenant_binding_refused) for a null org or unless p_proof is the org's (members of
skillet_system, or a session whose login is one, need none). The turn's functions call it
first: what they read afterwards is that org's only.$$;

-- The webhook's statement (skillet_receive_inbound), lighter by what it repeated per message:
-- the channel lookup is read in place (it called skillet_channel_by_address, a SECURITY
-- DEFINER function of its own with a search_path to switch to and back), and
-- skillet_store_inbound binds its org and proof in one call instead of two statements.
create or replace function skillet_receive_inbound(p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text, p_body text, p_sent_at timestamp with time zone, p_received_at timestamp with time zone, p_message_kind text, p_always_answered boolean, p_answerable boolean, p_media jsonb,
    p_contact_name text)
 RETURNS TABLE(organization_id uuid, channel_id uuid, contact_id text, conversation_id uuid, inbound_id uuid, created boolean, open boolean, outbox_status text, foreign_contact boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_catalog', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
declare
    v_channel record;
begin
    -- The receiving number's channel, read here (this function is the owner's already), not
    -- through skillet_channel_by_address: one call and one search_path switch fewer a message.
    select c.id, c.organization_id, c.agent_id, c.reply_to_non_text into v_channel
    from channels c
    where c.kind = p_kind and c.address = p_address;
    if not found then
        return;  -- no org connected this number
    end if;
    organization_id := v_channel.organization_id;
    channel_id := v_channel.id;
    -- The sender's contact id: the one an alias of theirs already maps to (oldest mapping
    -- first), else their preferred id; every id of theirs then points at it (an alias that
    -- pointed elsewhere joins it), and the route their reply leaves by is written.
    -- (One key lookup per id, at most two: `alias = any(...)` would let a planner without
    -- statistics scan the org's aliases.)
    contact_id := coalesce(
        (select a.contact_id from unnest(p_aliases) as x(alias)
         join lateral (
             select k.contact_id, k.created_at from contact_aliases k
             where k.organization_id = v_channel.organization_id and k.alias = x.alias
         ) a on true
         order by a.created_at, x.alias limit 1),
        p_preferred);
    -- Written only when an id is new or points elsewhere: ON CONFLICT DO UPDATE locks
    -- (writes) the alias row even when its WHERE leaves it as it is.
    if exists (
        select 1 from unnest(p_aliases) as x(alias)
        where not exists (
            select 1 from contact_aliases k
            where k.organization_id = v_channel.organization_id and k.alias = x.alias
              and k.contact_id = skillet_receive_inbound.contact_id)
    ) then
        insert into contact_aliases as a (organization_id, alias, contact_id)
        select v_channel.organization_id, alias, skillet_receive_inbound.contact_id
        from unnest(p_aliases) as alias
        on conflict (organization_id, alias) do update set contact_id = excluded.contact_id
        where a.contact_id <> excluded.contact_id;
    end if;
    insert into inbound_routes (organization_id, external_id, channel_id)
    values (v_channel.organization_id, p_external_id, v_channel.id)
    on conflict (organization_id, external_id) do nothing;
    select s.conversation_id, s.inbound_id, s.created, s.open, s.outbox_status,
           s.foreign_contact
    into conversation_id, inbound_id, created, open, outbox_status, foreign_contact
    from skillet_store_inbound(
        v_channel.organization_id, '', 'whatsapp', contact_id, p_external_id, p_body, p_sent_at,
        p_received_at, p_message_kind,
        p_always_answered or (v_channel.reply_to_non_text and p_answerable),
        v_channel.agent_id) s;
    -- What the worker fetches inside the turn (never the webhook): written with the message
    -- only, so a redelivery never resets a fetch or a transcript in progress.
    if p_media is not null and created then
        update messages m set media = p_media, media_state = 'pending'
        where m.id = skillet_receive_inbound.inbound_id;
    end if;
    -- The customer's WhatsApp profile name, as the delivery carried it (cleaned and cut by
    -- the webhook): the latest wins. Written only when it changed, so the usual delivery
    -- costs one key read of the row the message just referenced and takes no row lock.
    if p_contact_name is not null and not foreign_contact then
        update conversations c set contact_name = p_contact_name
        where c.id = skillet_receive_inbound.conversation_id
          and c.contact_name is distinct from p_contact_name;
    end if;
    return next;
end;
$function$;

create or replace function skillet_store_inbound(p_org uuid, p_proof text, p_channel text, p_contact text, p_external_id text, p_body text, p_sent_at timestamp with time zone, p_received_at timestamp with time zone, p_kind text, p_expects_reply boolean, p_agent uuid)
 RETURNS TABLE(conversation_id uuid, inbound_id uuid, created boolean, open boolean, outbox_status text, foreign_contact boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
declare
    v_contact text;
begin
    perform skillet_bind_org(p_org, p_proof);
    -- The message is inserted first, so the usual path (a new message) finds its id free
    -- through the unique index alone; only a taken id reads what is stored under it.
    select c.id into conversation_id from conversations c
    where c.organization_id = p_org and c.channel = p_channel and c.contact_id = p_contact;
    if not found then
        -- A contact's first message: refused before any conversation is created for them
        -- when its id is already another contact's.
        if exists (select 1 from messages m
                   where m.organization_id = p_org and m.channel = p_channel
                     and m.external_id = p_external_id and m.direction = 'inbound') then
            return query select * from skillet_stored_inbound(p_org, p_channel, p_contact,
                                                              p_external_id);
            return;
        end if;
        -- No ON CONFLICT DO UPDATE: it would lock the conversation row on every message
        -- and deadlock against a reply commit holding it.
        insert into conversations (organization_id, channel, contact_id)
        values (p_org, p_channel, p_contact)
        on conflict (organization_id, channel, contact_id) do nothing
        returning id into conversation_id;
        if not found then  -- created concurrently, committed by now: this statement sees it
            select c.id into conversation_id from conversations c
            where c.organization_id = p_org and c.channel = p_channel
              and c.contact_id = p_contact;
        end if;
    end if;
    insert into messages
        (organization_id, conversation_id, direction, channel, external_id, body, sent_at,
         received_at, kind, expects_reply, agent_id)
    values (p_org, conversation_id, 'inbound', p_channel, p_external_id, p_body, p_sent_at,
            p_received_at, p_kind, p_expects_reply, p_agent)
    on conflict (organization_id, channel, external_id) where direction = 'inbound'
    do nothing
    returning id into inbound_id;
    if found then
        created := true;
        open := true;
        outbox_status := null;
        foreign_contact := false;
        return next;
        return;
    end if;
    -- Stored before (a redelivery), or by a concurrent call that committed since.
    return query
        select * from skillet_stored_inbound(p_org, p_channel, p_contact, p_external_id);
end;
$function$;
