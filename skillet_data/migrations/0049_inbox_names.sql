-- The inbox: the customer's WhatsApp profile name per contact (stored by the webhook, read by
-- the turn), and an index for the conversations list and its search.

-- The latest profile name a delivery carried (Cloud API contacts[].profile.name, WAHA's
-- push name), cleaned by the webhook (no control or bidi characters) and at most 256
-- characters. A conversation is one contact of one org: the name lives on its row.
alter table conversations add column contact_name text null
    check (contact_name is null or char_length(contact_name) between 1 and 256);

drop function skillet_receive_inbound(text, text, text[], text, text, text, timestamp with time zone, timestamp with time zone, text, boolean, boolean, jsonb);

create function skillet_receive_inbound(p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text, p_body text, p_sent_at timestamp with time zone, p_received_at timestamp with time zone, p_message_kind text, p_always_answered boolean, p_answerable boolean, p_media jsonb,
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

comment on function skillet_receive_inbound(text, text, text[], text, text, text, timestamp with time zone, timestamp with time zone, text, boolean, boolean, jsonb, text) is
$$The webhook's one statement per inbound message: the channel of the receiving number (p_kind,
p_address) gives the org and the answering agent (no row: no org connected it), the sender's ids
(p_aliases, p_preferred for a person never seen) give the contact, whose aliases and the
message's reply route are recorded; then skillet_store_inbound. The message expects a reply when
p_always_answered (typed text, a voice note to transcribe), or when the channel answers non-text
messages and p_answerable. p_media (null: none): what identifies the media the worker fetches,
written on a new message only (media_state 'pending'). p_contact_name (null: the delivery named
none): the customer's profile name, written on the conversation when it changed (latest wins).
Returns the org, channel, contact and skillet_store_inbound's row. SECURITY DEFINER: the caller
never names an org nor holds a proof, and learns ids and states only.$$;
revoke all on function skillet_receive_inbound(text, text, text[], text, text, text, timestamp with time zone, timestamp with time zone, text, boolean, boolean, jsonb, text) from public;
grant execute on function skillet_receive_inbound(text, text, text[], text, text, text, timestamp with time zone, timestamp with time zone, text, boolean, boolean, jsonb, text) to skillet_webhook;

-- The conversations list reads an org's newest first (and pages on created_at, id).
create index conversations_org_created_idx on conversations (organization_id, created_at, id);

-- The take also returns the customer's profile name (the model reads it as the customer's
-- own data), so a turn stays three statements. A new column of its result: both overloads
-- are dropped and created again, with their comments (PUBLIC keeps EXECUTE, as before).
drop function skillet_take_conversation(uuid, uuid, uuid, double precision, integer, integer);
drop function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer,
    integer);

create function skillet_take_conversation(p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_ttl_s double precision, p_limit integer, p_history_limit integer)
 RETURNS TABLE(channel text, contact_id text, undelivered boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[],
    contact_name text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org, p_proof);
    update conversations c
    set lease_token = p_lease, lease_until = now() + make_interval(secs => p_ttl_s)
    where c.id = p_conversation and (c.lease_until is null or c.lease_until < now())
    returning c.channel, c.contact_id, c.contact_name into channel, contact_id, contact_name;
    if not found then
        return;
    end if;
    undelivered := exists (
        select 1 from outbox o
        where o.conversation_id = p_conversation and o.status = 'pending'
          and o.delivery_claimed_at is null);
    if undelivered then
        return next;
        return;
    end if;
    select * into ids, external_ids, bodies, received_ats, expects_replies, agent_ids,
                  agent_id, system_prompt, model_provider, model_name, catalog_revision,
                  history_directions, history_bodies
    from skillet_read_burst(p_org, p_conversation, p_limit, p_history_limit);
    return next;
end;
$function$;

comment on function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer,
    integer) is
$$Step one of a turn: bind the org with its proof, take the conversation's lease (free or expired)
under a fresh token for p_ttl_s seconds and read its first burst (skillet_read_burst). No row:
someone else holds it. `undelivered`: a committed reply still waits to be handed to its channel
(a crash between commit and send): the holder delivers it before reading. `contact_name`: the
customer's WhatsApp profile name (null: none known).$$;

create function skillet_take_conversation(p_org uuid, p_conversation uuid, p_lease uuid, p_ttl_s double precision, p_limit integer, p_history_limit integer)
 RETURNS TABLE(channel text, contact_id text, undelivered boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[],
    contact_name text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
    return query
    select * from skillet_take_conversation(
        p_org, current_setting('skillet.organization_proof', true), p_conversation, p_lease,
        p_ttl_s, p_limit, p_history_limit);
end;
$function$;

comment on function skillet_take_conversation(uuid, uuid, uuid, double precision, integer,
    integer) is
$$The take without a proof argument (the transaction's proof, or the operator's role): as
skillet_take_conversation(uuid, text, ...).$$;

-- An events-webhook event names the customer as the API does: their number (`contact_id`) and
-- their WhatsApp profile name (`contact_name`, null when none is known).
create or replace function skillet_record_event(p_org uuid, p_type text, p_conversation uuid, p_data jsonb)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
declare
    v_id uuid;
    v_contact text;
    v_contact_name text;
begin
    perform public.skillet_bind_org(p_org);
    if p_type is null or p_type not in ('conversation.handoff_requested',
            'conversation.taken_over', 'conversation.released', 'message.received') then
        raise exception 'event_type_unknown: %', p_type using errcode = '22023';
    end if;
    if p_data is not null and (jsonb_typeof(p_data) <> 'object'
                               or pg_column_size(p_data) > 8192) then
        raise exception 'event_data_invalid: a JSON object of at most 8 KiB'
            using errcode = '22023';
    end if;
    if not exists (select 1 from public.org_event_settings s
                   where s.organization_id = p_org and s.url is not null) then
        return null;
    end if;
    select c.contact_id, c.contact_name into v_contact, v_contact_name
    from public.conversations c
    where c.id = p_conversation and c.organization_id = p_org;
    if not found then
        raise exception 'conversation_not_found: %', p_conversation using errcode = 'P0002';
    end if;
    v_id := gen_random_uuid();
    insert into public.org_events (id, organization_id, type, conversation_id, payload)
    values (v_id, p_org, p_type, p_conversation, jsonb_build_object(
        'id', v_id,
        'type', p_type,
        'organization_id', p_org,
        'conversation_id', p_conversation,
        'contact_id', v_contact,
        'contact_name', v_contact_name,
        'occurred_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'data', coalesce(p_data, '{}'::jsonb)));
    return v_id;
end;
$function$;
