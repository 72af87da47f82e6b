-- The front door: an inbound message is stored in one statement, so a pooled connection
-- needs no bind before it and no reset after it.
--   skillet_store_inbound    a message whose org and contact are known (`skillet enqueue`,
--                            the API's requeue, tests): conversation + message, once. SECURITY
--                            INVOKER, binding its org with the org's proof (p_proof, as the
--                            turn's functions do): a caller stores only into an org it proves.
--   skillet_receive_inbound  a webhook delivery: the org and agent come from the channel
--                            the receiving number belongs to, the contact from the sender's
--                            ids, then skillet_store_inbound. SECURITY DEFINER: the webhook
--                            names no org and holds no proof; the function answers ids and
--                            states only, never a message's content.
-- The one rule about foreign ids lives in skillet_store_inbound: an inbound message id is
-- unique per org and channel, so a message id already stored in another contact's
-- conversation is refused (`foreign_contact`), never stored or answered twice.

-- What is stored under an inbound message id (org bound by the caller): the row
-- skillet_store_inbound returns for an id it did not store.
create function skillet_stored_inbound(
    p_org uuid, p_channel text, p_contact text, p_external_id text
) returns table (
    conversation_id uuid, inbound_id uuid, created boolean, open boolean,
    outbox_status text, foreign_contact boolean
)
language sql stable as $$
    select m.conversation_id, m.id, false, m.answered_by is null and m.context_at is null,
           o.status, c.contact_id <> p_contact
    from messages m
    join conversations c on c.id = m.conversation_id
    left join outbox o on o.message_id = m.answered_by
    where m.organization_id = p_org and m.channel = p_channel
      and m.external_id = p_external_id and m.direction = 'inbound'
$$;

create function skillet_store_inbound(
    p_org uuid, p_proof text, p_channel text, p_contact text, p_external_id text, p_body text,
    p_sent_at timestamptz, p_received_at timestamptz, p_kind text, p_expects_reply boolean,
    p_agent uuid
) returns table (
    conversation_id uuid, inbound_id uuid, created boolean, open boolean,
    outbox_status text, foreign_contact boolean
)
language plpgsql as $$
#variable_conflict use_column
declare
    v_contact text;
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    perform skillet_bind_org(p_org);
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
$$;

comment on function skillet_stored_inbound(uuid, text, text, text) is 'What is stored under '
     'an inbound message id of the bound org: the row skillet_store_inbound returns for an id '
     'it did not store (foreign_contact: another contact''s).';

comment on function skillet_store_inbound(
    uuid, text, text, text, text, text, timestamptz, timestamptz, text, boolean, uuid
) is 'Store one inbound message of a known org and contact, once (idempotent on org, channel '
     'and external id), with its conversation. One row: the conversation, the message, '
     'created (false: stored before), open (still waiting for a reply or to be kept as '
     'context), outbox_status (of the reply, when answered: pending means committed but not '
     'yet handed to its channel) and foreign_contact (the id is another contact''s stored '
     'message: nothing is stored, conversation_id is that contact''s). Binds p_org '
     'transaction-locally with its proof p_proof (refused without it); an unknown org fails '
     'the conversation''s foreign key.';

create function skillet_receive_inbound(
    p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text,
    p_body text, p_sent_at timestamptz, p_received_at timestamptz, p_message_kind text,
    p_always_answered boolean, p_answerable boolean
) returns table (
    organization_id uuid, channel_id uuid, contact_id text, conversation_id uuid,
    inbound_id uuid, created boolean, open boolean, outbox_status text,
    foreign_contact boolean
)
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_channel record;
begin
    select r.id, r.organization_id, r.agent_id, r.reply_to_non_text into v_channel
    from skillet_channel_by_address(p_kind, p_address) r;
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
    return next;
end;
$$;

comment on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean
) is 'The webhook''s one statement per inbound message: the channel of the receiving number '
     '(p_kind, p_address) gives the org and the answering agent (no row: no org connected '
     'it), the sender''s ids (p_aliases, p_preferred for a person never seen) give the '
     'contact, whose aliases and the message''s reply route are recorded; then '
     'skillet_store_inbound. The message expects a reply when p_always_answered (typed '
     'text), or when the channel answers non-text messages and p_answerable. Returns the '
     'org, channel, contact and skillet_store_inbound''s row. SECURITY DEFINER: the caller '
     'never names an org nor holds a proof, and learns ids and states only.';

-- The route lookup as PL/pgSQL (same signature, grants and body as 0020's SQL function):
-- a SQL function with a SET clause is planned again on every call, this keeps its plan.
create or replace function skillet_channel_by_address(p_kind text, p_address text)
returns table (id uuid, organization_id uuid, agent_id uuid, kind text, address text,
               display_phone text, created_at timestamptz, reply_to_non_text boolean)
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
    return query
        select c.id, c.organization_id, c.agent_id, c.kind, c.address, c.display_phone,
               c.created_at, c.reply_to_non_text
        from public.channels c
        where c.kind = p_kind and c.address = p_address;
end;
$$;

-- Typed by key lookups only: the generic plan is the plan (see the turn's functions).
alter function skillet_store_inbound(
    uuid, text, text, text, text, text, timestamptz, timestamptz, text, boolean, uuid
) set plan_cache_mode = force_generic_plan;
alter function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean
) set plan_cache_mode = force_generic_plan;

revoke all on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean
) from public;
grant execute on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean
) to skillet_webhook;
revoke all on function skillet_store_inbound(
    uuid, text, text, text, text, text, timestamptz, timestamptz, text, boolean, uuid
) from public;
grant execute on function skillet_store_inbound(
    uuid, text, text, text, text, text, timestamptz, timestamptz, text, boolean, uuid
) to skillet_worker, skillet_api;
