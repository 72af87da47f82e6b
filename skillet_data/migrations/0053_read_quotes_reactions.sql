-- WhatsApp as customers use it: a message that quotes another, reactions kept on the message
-- they react to, and which customer messages were marked read.
--   quote_external_id  the provider's id of the message a customer's message quotes
--   quote_id           ours, when it is a message of the conversation (else null)
--   quote_text         what the provider says the quoted message said (WAHA; cut at the door)
--   read_at            when the customer was shown it read (a turn's read + typing, or a
--                      person opening the conversation): at most once per message
alter table messages
    add column quote_external_id text null check (length(quote_external_id) between 1 and 256),
    add column quote_id uuid null references messages (id),
    add column quote_text text null check (length(quote_text) <= 1024),
    add column read_at timestamptz null;

-- The webhook's (and the API's) route to mark read only what a person has not seen yet.
grant update (read_at) on messages to skillet_worker, skillet_api;

-- A customer's reaction to one message: the latest per sender (WhatsApp keeps one each); an
-- empty emoji is a reaction taken back (kept, so a late older reaction cannot come back).
-- A reaction to a message we do not know is kept with its external id (target_id null).
-- `negative`: the emoji is in the deployment's negative set (SKILLET_NEGATIVE_REACTIONS) when
-- it arrived; a negative reaction to an agent reply counts against the skills it used.
create table message_reactions (
    organization_id    uuid not null references organizations (id),
    conversation_id    uuid null references conversations (id),
    target_external_id text not null check (length(target_external_id) between 1 and 256),
    target_id          uuid null references messages (id),
    sender             text not null check (length(sender) between 1 and 64),
    emoji              text not null check (length(emoji) <= 16),
    negative           boolean not null default false,
    external_id        text not null check (length(external_id) between 1 and 256),
    reacted_at         timestamptz not null,
    primary key (organization_id, target_external_id, sender)
);
create index message_reactions_target_idx on message_reactions (target_id)
    where target_id is not null;
create index message_reactions_negative_idx on message_reactions (organization_id, reacted_at)
    where negative;

alter table message_reactions enable row level security;
alter table message_reactions force row level security;
create policy tenant_isolation on message_reactions
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on message_reactions as permissive for all to skillet_system
    using (true) with check (true);
revoke all on message_reactions from public;
grant select on message_reactions to skillet_api, skillet_worker, skillet_webhook;

-- The message of the org an external id names in one conversation: a customer's message or
-- one we sent (by the provider's id of any of its parts).
create function skillet_message_by_external_id(p_org uuid, p_conversation uuid, p_external text)
returns uuid
language sql stable
as $$
    select coalesce(
        (select m.id from messages m
         where m.organization_id = p_org and m.external_id = p_external
           and m.direction = 'inbound' and m.channel = 'whatsapp'
           and m.conversation_id = p_conversation),
        (select o.message_id from outbox_receipts r join outbox o on o.id = r.outbox_id
         where r.organization_id = p_org and r.provider_message_id = p_external
           and o.conversation_id = p_conversation),
        (select m.id from messages m
         where m.conversation_id = p_conversation and m.external_id = p_external
           and m.direction = 'outbound'
         limit 1))
$$;
comment on function skillet_message_by_external_id(uuid, uuid, text) is
$$The id of the message an external id names in one conversation of the bound org: a customer's
message (by its provider id), a reply we sent (by the provider id of any of its parts), or a
message the business's phone sent; null when none. Never another conversation's: a customer
who names another's message id neither reads its text nor reacts to it.$$;

-- A quoted message: skillet_receive_inbound, then the quote on a new message only.
create function skillet_receive_quoting(
    p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text,
    p_body text, p_sent_at timestamptz, p_received_at timestamptz, p_message_kind text,
    p_always_answered boolean, p_answerable boolean, p_media jsonb, p_contact_name text,
    p_quote_external_id text, p_quote_text text)
returns table(organization_id uuid, channel_id uuid, contact_id text, conversation_id uuid,
              inbound_id uuid, created boolean, open boolean, outbox_status text,
              foreign_contact boolean)
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    r record;
begin
    for r in select * from skillet_receive_inbound(
            p_kind, p_address, p_aliases, p_preferred, p_external_id, p_body, p_sent_at,
            p_received_at, p_message_kind, p_always_answered, p_answerable, p_media,
            p_contact_name) loop
        if r.created then
            update messages m
            set quote_external_id = p_quote_external_id,
                quote_text = left(p_quote_text, 1024),
                quote_id = skillet_message_by_external_id(
                    r.organization_id, r.conversation_id, p_quote_external_id)
            where m.id = r.inbound_id;
        end if;
        organization_id := r.organization_id; channel_id := r.channel_id;
        contact_id := r.contact_id; conversation_id := r.conversation_id;
        inbound_id := r.inbound_id; created := r.created; open := r.open;
        outbox_status := r.outbox_status; foreign_contact := r.foreign_contact;
        return next;
    end loop;
end;
$$;
comment on function skillet_receive_quoting(text, text, text[], text, text, text, timestamptz,
    timestamptz, text, boolean, boolean, jsonb, text, text, text) is
$$skillet_receive_inbound for a message that quotes another (p_quote_external_id, the provider's
id of the quoted message; p_quote_text, what the provider says it said, or null): on a new
message only, the quote is recorded with our id of the quoted message when it is one of the
conversation's (skillet_message_by_external_id). Same row, same SECURITY DEFINER rules.$$;
revoke all on function skillet_receive_quoting(text, text, text[], text, text, text,
    timestamptz, timestamptz, text, boolean, boolean, jsonb, text, text, text) from public;
grant execute on function skillet_receive_quoting(text, text, text[], text, text, text,
    timestamptz, timestamptz, text, boolean, boolean, jsonb, text, text, text) to skillet_webhook;

-- A reaction: never a message, never a turn.
create function skillet_receive_reaction(
    p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text,
    p_target text, p_emoji text, p_negative boolean, p_at timestamptz)
returns table(organization_id uuid, target_id uuid, recorded boolean)
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_org uuid;
    v_contact text;
    v_conversation uuid;
begin
    select r.organization_id into v_org from skillet_channel_by_address(p_kind, p_address) r;
    if v_org is null then
        return;  -- no org connected this number
    end if;
    perform skillet_bind_org(v_org);
    v_contact := coalesce(
        (select a.contact_id from unnest(p_aliases) as x(alias)
         join lateral (
             select k.contact_id, k.created_at from contact_aliases k
             where k.organization_id = v_org and k.alias = x.alias
         ) a on true
         order by a.created_at, x.alias limit 1),
        p_preferred);
    select c.id into v_conversation from conversations c
    where c.organization_id = v_org and c.channel = 'whatsapp' and c.contact_id = v_contact;
    organization_id := v_org;
    target_id := case when v_conversation is not null
                      then skillet_message_by_external_id(v_org, v_conversation, p_target) end;
    -- The latest per sender: an older reaction arriving late changes nothing.
    insert into message_reactions as r
        (organization_id, conversation_id, target_external_id, target_id, sender, emoji,
         negative, external_id, reacted_at)
    values (v_org, v_conversation, p_target, target_id, v_contact, p_emoji,
            p_negative and p_emoji <> '', p_external_id, p_at)
    on conflict (organization_id, target_external_id, sender) do update
        set emoji = excluded.emoji, negative = excluded.negative,
            external_id = excluded.external_id, reacted_at = excluded.reacted_at,
            target_id = coalesce(excluded.target_id, r.target_id),
            conversation_id = coalesce(excluded.conversation_id, r.conversation_id)
        where excluded.reacted_at >= r.reacted_at and excluded.external_id <> r.external_id
    returning true into recorded;
    recorded := coalesce(recorded, false);
    return next;
end;
$$;
comment on function skillet_receive_reaction(text, text, text[], text, text, text, text, boolean,
    timestamptz) is
$$The webhook's one statement per reaction: the receiving number's org (no row: none connected
it), the sender's contact (by their aliases, else p_preferred), the reacted message
(p_target, the provider's id: skillet_message_by_external_id in the contact's conversation; null
when unknown, kept with the external id), then the latest reaction per sender and message
(p_emoji '' takes it back; p_negative: in the negative set). recorded: false for a redelivery or
a reaction older than the one kept. Never a message, never a turn. SECURITY DEFINER, for
skillet_webhook.$$;
revoke all on function skillet_receive_reaction(text, text, text[], text, text, text, text,
    boolean, timestamptz) from public;
grant execute on function skillet_receive_reaction(text, text, text[], text, text, text, text,
    boolean, timestamptz) to skillet_webhook;

-- The burst, each quoting message's body led by what it quotes (U+E000 quote U+E000 body:
-- conversation.queries splits it; the customer's own text never holds U+E000, see
-- inbox.message.storable_body): the model reads the quote, the rules read the text alone.
create or replace function skillet_read_burst(p_org uuid, p_conversation uuid, p_limit integer,
                                              p_history_limit integer)
returns table(ids uuid[], external_ids text[], bodies text[],
              received_ats timestamp with time zone[], expects_replies boolean[],
              agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text,
              model_name text, catalog_revision bigint, history_directions text[],
              history_bodies text[])
language plpgsql
as $$
#variable_conflict use_column
declare
    v_last_agent uuid;
begin
    if (select c.mode from conversations c where c.id = p_conversation) <> 'agent' then
        return next;  -- a person holds it, or is asked for: nothing for the agent
        return;
    end if;
    select array_agg(m.id order by m.k, m.id), array_agg(m.external_id order by m.k, m.id),
           array_agg(m.body order by m.k, m.id), array_agg(m.received_at order by m.k, m.id),
           array_agg(m.expects_reply order by m.k, m.id), array_agg(m.agent_id order by m.k, m.id)
    into ids, external_ids, bodies, received_ats, expects_replies, agent_ids
    from (
        select id, external_id, received_at, expects_reply, agent_id,
               coalesce(received_at, created_at) as k,
               case when quote_external_id is null then body
                    else E'\uE000' || replace(left(coalesce(
                             (select q.body from messages q where q.id = i.quote_id),
                             quote_text, ''), 200), E'\uE000', '')
                         || E'\uE000' || body end as body
        from messages i
        where conversation_id = p_conversation and direction = 'inbound'
          and answered_by is null and context_at is null
        order by coalesce(received_at, created_at), id
        limit p_limit
    ) m;
    if ids is null then
        return next;
        return;
    end if;
    if not (true = any(expects_replies)) then
        update messages set context_at = now()
        where id = any(ids) and answered_by is null and context_at is null;
        ids := null;
        external_ids := null; bodies := null; received_ats := null;
        expects_replies := null; agent_ids := null;
        return next;
        return;
    end if;
    v_last_agent := agent_ids[cardinality(agent_ids)];
    select a.id, a.system_prompt, a.model_provider, a.model_name
    into agent_id, system_prompt, model_provider, model_name
    from agents a
    where a.organization_id = p_org
    order by (a.id = v_last_agent) desc nulls last, a.created_at, a.id
    limit 1;
    select coalesce((select r.revision from skill_catalog_revisions r
                     where r.organization_id = p_org), 0)
    into catalog_revision;
    -- A person's or the phone's message reads as its author, not 'outbound'.
    select coalesce(array_agg(h.direction order by h.created_at, h.id), '{}'),
           coalesce(array_agg(h.body order by h.created_at, h.id), '{}')
    into history_directions, history_bodies
    from (
        select case when direction = 'outbound' and author in ('person', 'phone') then author
                    else direction end as direction,
               body, created_at, id from messages
        where conversation_id = p_conversation
          and (direction = 'outbound' or answered_by is not null or not expects_reply
               or context_at is not null)
          and not (id = any(ids))
        order by created_at desc, id desc limit p_history_limit
    ) h;
    return next;
end;
$$;
comment on function skillet_read_burst(uuid, uuid, integer, integer) is
$$The next burst of a conversation (org bound by the caller), oldest first: each open message with
the answering agent of the last one, the org's catalog revision and up to p_history_limit
messages of history before it (a person's or the phone's message under its author, 'person' or
'phone', instead of 'outbound'; customer messages kept as context included). A message that
quotes another has its body led by U+E000, the first 200 characters of the quoted message (ours,
else the provider's text), U+E000. Nothing while the conversation's mode is not 'agent' (nothing
marked either). A burst of messages that expect no reply is kept as context here (context_at)
and comes back empty (the holder then lets go, or reads again).$$;

-- Marking read, once per message: claim the customer messages not yet shown read, up to and
-- including p_upto (null: all of the conversation's), and return the latest one's external id.
create function skillet_claim_read(p_org uuid, p_conversation uuid, p_upto uuid)
returns text
language sql
as $$
    with claimed as (
        update messages m set read_at = now()
        where m.organization_id = p_org and m.conversation_id = p_conversation
          and m.direction = 'inbound' and m.read_at is null and m.external_id is not null
          and (p_upto is null or coalesce(m.received_at, m.created_at) <= (
                select coalesce(u.received_at, u.created_at) from messages u where u.id = p_upto))
        returning m.external_id, coalesce(m.received_at, m.created_at) as k, m.id
    )
    select external_id from claimed order by k desc, id desc limit 1
$$;
comment on function skillet_claim_read(uuid, uuid, uuid) is
$$Claim the conversation's customer messages not yet marked read (up to p_upto's arrival, or all
with null) in the bound org, once each: the latest one's external id (what a read receipt
names; marking it read marks the earlier ones too), or null when none was left to mark.$$;
grant execute on function skillet_claim_read(uuid, uuid, uuid) to skillet_worker, skillet_api;

-- A read mark's one statement: bind the org with its proof, claim the read (p_claim), and
-- return the number the message came to, its own secrets and the customer.
create function skillet_presence_target(p_org uuid, p_proof text, p_conversation uuid,
                                        p_external_id text, p_claim boolean)
returns table(kind text, address text, status text, waha_base_url text, access_token text,
              waha_api_key text, waha_server_vouched boolean, contact_id text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org, p_proof);
    if p_claim then
        perform skillet_claim_read(p_org, p_conversation, (
            select m.id from messages m
            where m.organization_id = p_org and m.channel = 'whatsapp'
              and m.external_id = p_external_id and m.direction = 'inbound'));
    end if;
    return query
        select c.kind, c.address, c.status, c.waha_base_url, s.access_token, s.waha_api_key,
               c.waha_server_vouched, v.contact_id
        from inbound_routes ir
        join channels c on c.id = ir.channel_id
        join conversations v on v.id = p_conversation
        left join lateral skillet_channel_secrets(c.kind, c.address) s on true
        where ir.organization_id = p_org and ir.external_id = p_external_id;
end;
$$;
comment on function skillet_presence_target(uuid, text, uuid, text, boolean) is
$$A read mark's one statement (channels.presence): bind p_org with its proof p_proof; with
p_claim, claim the read of the conversation's customer messages up to p_external_id
(skillet_claim_read: once each); then the number that message came to (inbound_routes), its
status, own WAHA server and own secrets (skillet_channel_secrets), and the conversation's
customer. No row: the message came through no connected number.$$;
grant execute on function skillet_presence_target(uuid, text, uuid, text, boolean)
    to skillet_worker, skillet_api;
