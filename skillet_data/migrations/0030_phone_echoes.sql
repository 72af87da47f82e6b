-- The owner's phone. A message the business sends from its own WhatsApp app (a WAHA `fromMe`
-- event on `message.any`, a Cloud API `smb_message_echoes` echo of WhatsApp Business app
-- coexistence) comes back to the webhook as an echo, and so does, on WAHA, every reply
-- skillet itself sent. Whose it is is decided in the worker, not in the webhook:
--   skillet_receive_echo  the webhook's one statement per echo (SECURITY DEFINER, the org from
--                         the channel, as skillet_receive_inbound): the echo is stored once,
--                         pending, in message_echoes, then a job is enqueued a grace later;
--   skillet_settle_echo   the job's one statement, after that grace: an echo whose id is one the
--                         provider answered one of our sends with (outbox_receipts), or that is
--                         part of a reply being sent right now, is ours (recorded, nothing
--                         else); any other is the phone's: an outbound message (author 'phone',
--                         never sent again: the phone sent it) answering what no one answered,
--                         and the conversation in 'human', held by 'phone'.
-- The grace exists because the echo of a reply we just sent may reach the webhook before that
-- send's provider id is stored; an echo is never settled before it has passed.

create table message_echoes (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    conversation_id uuid not null references conversations (id),
    channel_id      uuid not null references channels (id),
    channel_kind    text not null,
    external_id     text not null check (length(external_id) between 1 and 256),
    body            text not null,
    kind            text not null check (kind ~ '^[a-z_]{1,32}$'),
    sent_at         timestamptz null,
    received_at     timestamptz not null,
    status          text not null default 'pending' check (status in ('pending', 'ours', 'phone')),
    message_id      uuid null references messages (id),  -- the phone's message it became
    decided_at      timestamptz null,
    unique (organization_id, external_id)
);
create index message_echoes_pending_idx on message_echoes (received_at) where status = 'pending';
create index message_echoes_conversation_idx on message_echoes (conversation_id);

alter table message_echoes enable row level security;
create policy tenant_isolation on message_echoes
    using (organization_id = skillet_current_org())
    with check (organization_id = skillet_current_org());
create policy system_access on message_echoes as permissive for all to skillet_system
    using (true) with check (true);
alter table message_echoes force row level security;
grant select, update on message_echoes to skillet_worker;
grant select on message_echoes to skillet_api;

create function skillet_receive_echo(
    p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text,
    p_body text, p_sent_at timestamptz, p_received_at timestamptz, p_message_kind text
) returns table (organization_id uuid, echo_id uuid, created boolean, pending boolean)
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_channel record;
    v_contact text;
    v_conversation uuid;
begin
    select r.id, r.organization_id, r.kind into v_channel
    from skillet_channel_by_address(p_kind, p_address) r;
    if not found then
        return;  -- no org connected this number
    end if;
    organization_id := v_channel.organization_id;
    -- A redelivery finds its row: nothing else is written.
    select e.id, e.status = 'pending' into echo_id, pending from message_echoes e
    where e.organization_id = v_channel.organization_id and e.external_id = p_external_id;
    if found then
        created := false;
        return next;
        return;
    end if;
    -- The customer it went to, as skillet_receive_inbound finds a sender: the contact an id of
    -- theirs maps to, else their preferred id; their ids then point at it.
    v_contact := coalesce(
        (select a.contact_id from unnest(p_aliases) as x(alias)
         join lateral (
             select k.contact_id, k.created_at from contact_aliases k
             where k.organization_id = v_channel.organization_id and k.alias = x.alias
         ) a on true
         order by a.created_at, x.alias limit 1),
        p_preferred);
    insert into contact_aliases as a (organization_id, alias, contact_id)
    select v_channel.organization_id, alias, v_contact from unnest(p_aliases) as alias
    on conflict (organization_id, alias) do update set contact_id = excluded.contact_id
    where a.contact_id <> excluded.contact_id;
    -- The owner may write first: the conversation is created then.
    select c.id into v_conversation from conversations c
    where c.organization_id = v_channel.organization_id and c.channel = 'whatsapp'
      and c.contact_id = v_contact;
    if not found then
        insert into conversations (organization_id, channel, contact_id)
        values (v_channel.organization_id, 'whatsapp', v_contact)
        on conflict (organization_id, channel, contact_id) do nothing
        returning id into v_conversation;
        if not found then
            select c.id into v_conversation from conversations c
            where c.organization_id = v_channel.organization_id and c.channel = 'whatsapp'
              and c.contact_id = v_contact;
        end if;
    end if;
    insert into message_echoes (organization_id, conversation_id, channel_id, channel_kind,
                                external_id, body, kind, sent_at, received_at)
    values (v_channel.organization_id, v_conversation, v_channel.id, v_channel.kind,
            p_external_id, p_body, p_message_kind, p_sent_at, p_received_at)
    on conflict (organization_id, external_id) do nothing
    returning id into echo_id;
    created := found;
    pending := true;
    if not created then  -- stored by a concurrent call that committed since
        select e.id, e.status = 'pending' into echo_id, pending from message_echoes e
        where e.organization_id = v_channel.organization_id and e.external_id = p_external_id;
    end if;
    return next;
end;
$$;
comment on function skillet_receive_echo(
    text, text, text[], text, text, text, timestamptz, timestamptz, text
) is 'The webhook''s one statement per echo of a message the business''s number sent (WAHA '
     'fromMe, Cloud API smb_message_echoes): the channel of p_kind/p_address gives the org (no '
     'row: no org connected it), the recipient''s ids (p_aliases, p_preferred) the contact and '
     'its conversation (created when the owner writes first); the echo is stored once, pending '
     '(idempotent on org and external id). Returns the org, the echo, created (false: stored '
     'before) and pending (not settled yet: the caller enqueues skillet_settle_echo''s job). '
     'SECURITY DEFINER: the caller names no org and learns ids and states only.';
alter function skillet_receive_echo(
    text, text, text[], text, text, text, timestamptz, timestamptz, text
) set plan_cache_mode = force_generic_plan;
revoke all on function skillet_receive_echo(
    text, text, text[], text, text, text, timestamptz, timestamptz, text
) from public;
grant execute on function skillet_receive_echo(
    text, text, text[], text, text, text, timestamptz, timestamptz, text
) to skillet_webhook;

-- Whether an echo is one of our sends: its id is a provider id one of our sends got back
-- (WAHA's serialized `true_<chat>_<key>` or the bare key some engines answer a send with), or
-- it is part of a reply of its conversation claimed for a send still in flight (pending and
-- claimed: its provider ids are stored with its 'sent' mark, in one statement).
create function skillet_echo_is_ours(p_org uuid, p_echo message_echoes)
returns boolean
language sql stable
as $$
    select exists (
        select 1 from outbox_receipts r
        where r.organization_id = p_org
          and r.provider_message_id in (
              p_echo.external_id,
              case when p_echo.channel_kind = 'waha'
                   then substring(p_echo.external_id from '^(?:true|false)_[^_]+_(.+)$') end)
    ) or exists (
        select 1 from outbox o
        where o.conversation_id = p_echo.conversation_id and o.status = 'pending'
          and o.delivery_claimed_at is not null and strpos(o.body, p_echo.body) > 0
    )
$$;
comment on function skillet_echo_is_ours(uuid, message_echoes) is
$$Whether an echo (org bound by the caller) is one of skillet's own sends: its id is a provider
id one of our sends was answered with (outbox_receipts; for WAHA also the bare key of a
serialized `true_<chat>_<key>` id), or its text is part of a reply of its conversation whose send
is in flight (pending and claimed).$$;

create function skillet_settle_echo(p_org uuid, p_proof text, p_echo uuid,
                                    p_grace_s double precision)
returns table (outcome text, decided boolean, wait_s double precision, conversation_id uuid,
               mode_before text, message_id uuid)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    v_echo message_echoes;
    v_message uuid;
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    perform skillet_bind_org(p_org);
    decided := false;
    select * into v_echo from message_echoes e where e.id = p_echo for update;
    if not found then
        outcome := 'missing';
        return next;
        return;
    end if;
    conversation_id := v_echo.conversation_id;
    if v_echo.status <> 'pending' then  -- a job run twice: decided by its first run
        outcome := v_echo.status;
        message_id := v_echo.message_id;
        return next;
        return;
    end if;
    if skillet_echo_is_ours(p_org, v_echo) then
        update message_echoes set status = 'ours', decided_at = now() where id = p_echo;
        outcome := 'ours';
        decided := true;
        return next;
        return;
    end if;
    wait_s := extract(epoch from (v_echo.received_at
                                  + make_interval(secs => p_grace_s) - clock_timestamp()));
    -- Too early to call it the owner's only while a reply of this conversation is in flight
    -- (claimed, not yet marked sent) or was sent without a provider id within the grace: its
    -- id may be on its way. With none, the owner wrote it: decided at once, so the agent
    -- stops before its next turn.
    if wait_s > 0 and exists (
        select 1 from outbox o
        where o.conversation_id = v_echo.conversation_id
          and ((o.status = 'pending' and o.delivery_claimed_at is not null)
               or (o.status = 'sent' and o.sent_at > v_echo.received_at
                                                    - make_interval(secs => p_grace_s)
                   and not exists (select 1 from outbox_receipts r
                                   where r.outbox_id = o.id)))) then
        outcome := 'wait';
        return next;
        return;
    end if;
    wait_s := null;
    -- Locked as every change of mode locks it (skillet_commit_turn): a turn running now
    -- commits before this (its reply comes first) or is refused (taken_over).
    select c.mode into mode_before from conversations c
    where c.id = v_echo.conversation_id for update;
    insert into messages (organization_id, conversation_id, direction, channel, external_id,
                          body, sent_at, kind, author, route_via_id, created_at)
    values (p_org, v_echo.conversation_id, 'outbound', 'whatsapp', v_echo.external_id,
            v_echo.body, v_echo.sent_at, v_echo.kind, 'phone',
            (select i.id from messages i
             where i.conversation_id = v_echo.conversation_id and i.direction = 'inbound'
             order by coalesce(i.received_at, i.created_at) desc, i.id desc limit 1),
            clock_timestamp())
    returning id into v_message;
    -- Like a person's reply: the owner answered what no one had.
    update messages m set answered_by = v_message
    where m.conversation_id = v_echo.conversation_id and m.direction = 'inbound'
      and m.answered_by is null and m.context_at is null;
    -- A person who holds it from the console keeps it; otherwise the phone holds it.
    update conversations c set
        mode_since = case when c.mode = 'human' then c.mode_since else now() end,
        mode_cause = case when c.mode = 'agent' then 'phone' else c.mode_cause end,
        mode_reason = case when c.mode = 'agent' then 'respondida pelo celular da empresa'
                           else c.mode_reason end,
        held_by = case when c.mode = 'human' then c.held_by else 'phone' end,
        handoff_at = coalesce(c.handoff_at, now()),
        person_replied_at = now(),
        mode = 'human'
    where c.id = v_echo.conversation_id;
    update message_echoes set status = 'phone', message_id = v_message, decided_at = now()
    where id = p_echo;
    outcome := 'phone';
    decided := true;
    message_id := v_message;
    return next;
end;
$$;
comment on function skillet_settle_echo(uuid, text, uuid, double precision) is
$$Settle one pending echo of the org p_org (bound with its proof p_proof): 'ours' when it is one
of skillet's own sends (skillet_echo_is_ours), recorded and nothing else; 'wait' (wait_s: the
seconds left) while less than p_grace_s seconds have passed since it arrived; else 'phone': an
outbound message of author 'phone' (not sent: the phone sent it; route_via_id the customer's
latest message) answering every customer message no one answered, and the conversation in mode
'human' held by 'phone' (mode_cause 'phone' when the agent had it; a person holding it keeps it;
handoff_at kept, person_replied_at now), serialized with the reply commit on the conversation
row. decided: this call settled it (false for an echo settled before, whose outcome it returns:
a job run twice changes the mode once). mode_before: the conversation's mode before it.$$;
revoke all on function skillet_settle_echo(uuid, text, uuid, double precision) from public;
grant execute on function skillet_settle_echo(uuid, text, uuid, double precision)
    to skillet_worker;
