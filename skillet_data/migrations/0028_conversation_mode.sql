-- A person in the conversation. Every conversation has a mode: `agent` (the agent answers),
-- `waiting` (a handoff was asked for and no person has taken it) or `human` (a person holds
-- it: `held_by` is an API key's prefix, or `phone`). Postgres owns the mode like the lease:
--   * the reply commit refuses a turn whose conversation left `agent` (outcome 'taken_over'),
--     serialized with a takeover on the conversation row, so a takeover during a turn stops
--     that turn's reply; a turn may itself hand off (p_handoff_cause) in its commit;
--   * the burst read returns nothing to answer outside `agent`, marking nothing: those
--     messages stay unanswered by anyone until a person answers them or the agent resumes;
--   * the sweep wakes no conversation outside `agent`, but wakes any with a reply committed
--     and never handed to its channel (a person's reply or a notice whose job was lost);
--   * skillet_conversation_mode_tick returns idle conversations to the agent and sends one
--     notice to a customer left waiting (both cross-org, for the worker's cron).
-- Replies other than the agent's (a person's, a notice) answer no one message: reply_to_id
-- stays null (one agent reply per message, messages_one_reply_key) and route_via_id names
-- the customer message whose number the reply leaves from.

alter table conversations
    add column mode text not null default 'agent'
        check (mode in ('agent', 'waiting', 'human')),
    add column held_by text null,
    add column mode_since timestamptz null,
    add column mode_reason text null,
    add column mode_cause text null
        check (mode_cause in ('tool', 'customer', 'phone', 'console')),
    add column handoff_at timestamptz null,      -- when it last left `agent`
    add column person_replied_at timestamptz null, -- a person's latest message since then
    add column wait_notice_at timestamptz null;  -- the waiting notice of this handoff, once
create index conversations_mode_idx on conversations (organization_id, mode, mode_since)
    where mode <> 'agent';

alter table messages
    add column author text null check (author in ('agent', 'person', 'phone')),
    add column author_key_prefix text null,
    add column route_via_id uuid null references messages (id),
    add column skills jsonb null;  -- an agent reply's skills: [{name, version_id}]
update messages set author = 'agent' where direction = 'outbound';

alter table agents
    add column handoff_ack text null check (length(handoff_ack) between 1 and 1000),
    add column handoff_wait_notice text null
        check (length(handoff_wait_notice) between 1 and 1000);

-- A person's reply is written by the API: its outbox row too.
grant insert on outbox to skillet_api;

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
        select id, external_id, body, received_at, expects_reply, agent_id,
               coalesce(received_at, created_at) as k
        from messages
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
'phone', instead of 'outbound'; customer messages kept as context included). Nothing while the
conversation's mode is not 'agent' (nothing marked either). A burst of messages that expect no
reply is kept as context here (context_at) and comes back empty (the holder then lets go, or
reads again).$$;

create or replace function skillet_release_lease(p_conversation uuid, p_lease uuid)
returns boolean
language plpgsql
as $$
declare
    released boolean;
begin
    update conversations c set lease_token = null, lease_until = null
    where c.id = p_conversation and c.lease_token = p_lease
      and (c.mode <> 'agent' or not exists (
          select 1 from messages m
          where m.conversation_id = p_conversation and m.direction = 'inbound'
            and m.answered_by is null and m.context_at is null))
      and not exists (
          select 1 from outbox o join messages r on r.id = o.message_id
          where o.conversation_id = p_conversation and o.status = 'pending'
            and o.delivery_claimed_at is null and r.reply_to_id is null)
    returning true into released;
    return released;
end;
$$;
comment on function skillet_release_lease(uuid, uuid) is
$$Release the lease only when nothing waits for the holder: no customer message the agent should
answer (none while a person holds the conversation or is asked for) and no person's reply or
notice (an outbound message answering no one message) committed during the turn and never
handed to its channel; the holder's own replies it marks itself. A message committed
before this statement is seen (and the holder keeps going); one committed after it finds the
lease free. True when released, null (not false) when the lease stays.$$;

-- The reply commit with the mode fence and the handoff, in one statement.
create function skillet_commit_turn(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    v_names text[];
    v_uses bigint[];
    v_views bigint[];
    v_mode text;
begin
    perform skillet_bind_org(p_org);
    deliverable := false;
    select c.mode into v_mode from conversations c where c.id = p_conversation for update;
    if p_lease is not null and not exists (
        select 1 from conversations
        where id = p_conversation and lease_token = p_lease and lease_until > now()
    ) then
        outcome := 'lease_lost';
        return next;
        return;
    end if;
    if v_mode <> 'agent' then
        outcome := 'taken_over';
        return next;
        return;
    end if;
    if exists (
        select 1 from messages
        where conversation_id = p_conversation and direction = 'inbound' and answered_by is null
          and expects_reply and context_at is null
          and coalesce(received_at, created_at) <= p_first_received and not (id = any(p_batch))
    ) then
        outcome := 'overtaken';
        return next;
        return;
    end if;
    if (select count(*) from messages
        where id = any(p_batch) and direction = 'inbound' and answered_by is null)
       <> cardinality(p_batch) then
        outcome := 'answered';
        return next;
        return;
    end if;
    insert into messages (organization_id, conversation_id, direction, channel, body,
                          reply_to_id, author, skills)
    values (p_org, p_conversation, 'outbound', p_channel, p_body, p_batch[cardinality(p_batch)],
            'agent', p_skills)
    returning id into reply_id;
    update messages set answered_by = reply_id where id = any(p_batch);
    insert into outbox (organization_id, conversation_id, message_id, body)
    values (p_org, p_conversation, reply_id, p_body)
    returning id into outbox_id;
    if p_handoff_cause is not null then
        update conversations set mode = 'waiting', held_by = null, mode_since = now(),
            mode_reason = left(p_handoff_reason, 500), mode_cause = p_handoff_cause,
            handoff_at = now(), person_replied_at = null, wait_notice_at = null
        where id = p_conversation;
    end if;
    if p_claim then
        select true, k.reply_to_external_id, k.last_inbound_at, k.route_kind, k.route_address
        into deliverable, reply_to_external_id, last_inbound_at, route_kind, route_address
        from skillet_claim_outbox(outbox_id) k;
        deliverable := coalesce(deliverable, false);
    end if;
    select array_agg(n order by n), array_agg(uses order by n), array_agg(views order by n)
    into v_names, v_uses, v_views
    from (select n, count(*) filter (where src = 'u') as uses,
                 count(*) filter (where src = 'v') as views
          from (select unnest(p_used) as n, 'u' as src
                union all select unnest(p_viewed), 'v') as events
          group by n) as counted;
    if v_names is not null then
        perform skillet_bump_usage(
            array_fill(p_org, array[cardinality(v_names)]), v_names, v_uses, v_views,
            array_fill(0::bigint, array[cardinality(v_names)]), p_at);
    end if;
    if cardinality(p_names) > 0 then
        perform skillet_bump_activation_daily(p_org, p_names, p_triggers, p_at);
    end if;
    if p_usage is not null then
        perform skillet_bump_token_usage(p_org, p_usage, p_at);
    end if;
    outcome := 'replied';
    return next;
end;
$$;
comment on function skillet_commit_turn(uuid, uuid, text, uuid[], timestamp with time zone, text,
    text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text,
    jsonb) is
$$Step two of a turn: the fenced reply commit. Serialized on the conversation row (as is every
change of its mode); refused with outcome 'lease_lost' (p_lease is not the live lease),
'taken_over' (the conversation's mode is no longer 'agent': a person holds it or was asked for),
'overtaken' (an older message that expects a reply is still open, not kept as context: read
again) or 'answered' (part
of the burst was answered first); else 'replied': the reply (author 'agent', p_skills: the
skills the turn used), its outbox row, the 'answered' marks, with p_handoff_cause ('tool' |
'customer') the conversation put in 'waiting' for p_handoff_reason, the turn's counts
(skillet_bump_usage, skillet_bump_activation_daily, skillet_bump_token_usage) and, with p_claim,
the delivery claim of its outbox row (skillet_claim_outbox), so the sender needs no statement
before the send. The claim comes before the increments: those rows are shared by every turn of
an org, so they are locked last, for the shortest time. A crash between this commit and the send
leaves a claimed row, which skillet_fail_abandoned_claims fails as `delivery_unknown`; a row
without a route is not claimed, and the next holder delivers it.$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean default true)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language sql
set plan_cache_mode = force_generic_plan
as $$
    select * from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch,
                                      p_first_received, p_body, p_used, p_viewed, p_names,
                                      p_triggers, p_at, p_lease, p_usage, p_claim,
                                      null::text, null::text, null::jsonb)
$$;
comment on function skillet_commit_turn(uuid, uuid, text, uuid[], timestamp with time zone, text,
    text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean) is
$$The reply commit of workers of the previous release (and of skillet_commit_reply): the
seventeen-argument skillet_commit_turn with no handoff and no skills recorded, same outcomes
(taken_over included).$$;

create function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    return query
    select * from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch,
                                      p_first_received, p_body, p_used, p_viewed, p_names,
                                      p_triggers, p_at, p_lease, p_usage, p_claim,
                                      p_handoff_cause, p_handoff_reason, p_skills);
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text,
    text, jsonb) is
$$The turn's reply commit with the org's proof, a handoff and the skills used: sets the proof for
the transaction and commits as skillet_commit_turn(uuid, uuid, ..., text, text, jsonb) does.$$;

create or replace function skillet_claim_outbox(p_outbox uuid)
returns table(reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
as $$
#variable_conflict use_column
begin
    return query
    with target as (
        select id, organization_id, conversation_id, message_id from outbox
        where id = p_outbox and status = 'pending' and delivery_claimed_at is null
        for update
    ), context as (
        select t.id, case when r.reply_to_id is not null then i.external_id end
                   as reply_to_external_id,
               (select max(m.sent_at) from messages m
                where m.conversation_id = t.conversation_id and m.direction = 'inbound')
                   as last_inbound_at,
               route.kind as route_kind, route.address as route_address
        from target t
        join messages r on r.id = t.message_id
        left join messages i on i.id = coalesce(r.reply_to_id, r.route_via_id)
        left join lateral (
            select * from (
                select ch.kind, ch.address, 0 as preference
                from inbound_routes ir join channels ch on ch.id = ir.channel_id
                where ir.organization_id = t.organization_id and ir.external_id = i.external_id
                union all
                select ch.kind, ch.address, 1 from channels ch
                where ch.organization_id = t.organization_id
                  and (select count(*) from channels o
                       where o.organization_id = t.organization_id) = 1
            ) candidates order by preference limit 1
        ) route on true
    ), claimed as (
        update outbox o set delivery_claimed_at = now()
        from context c where o.id = c.id and c.route_kind is not null
    )
    select c.reply_to_external_id, c.last_inbound_at, c.route_kind, c.route_address
    from context c;
end;
$$;
comment on function skillet_claim_outbox(uuid) is
$$What the reply's sender needs, claiming the outbox row for one send when it has a route (the
channel the answered message came in on, or for a person's reply or a notice the one it
route_via_id names, else the org's only channel): only such a row leaves the building, so only
it could be sent twice by a crash mid-send. reply_to_external_id only for an agent's reply (the
message it answers). No row: it is sent, failed or claimed already.$$;

create or replace function skillet_conversations_waiting(p_after_s double precision,
                                                         p_limit integer)
returns table(organization_id uuid, conversation_id uuid)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select w.organization_id, w.conversation_id from (
        select m.organization_id, m.conversation_id
        from public.messages m
        join public.conversations c on c.id = m.conversation_id
        where m.direction = 'inbound' and m.answered_by is null and m.expects_reply
          and m.context_at is null and c.mode = 'agent'
          and m.received_at < now() - make_interval(secs => p_after_s)
          and (c.lease_until is null or c.lease_until < now())
        union
        select o.organization_id, o.conversation_id
        from public.outbox o
        join public.conversations c on c.id = o.conversation_id
        where o.status = 'pending' and o.delivery_claimed_at is null
          and o.created_at < now() - make_interval(secs => p_after_s)
          and (c.lease_until is null or c.lease_until < now())
    ) w
    limit p_limit
$$;
comment on function skillet_conversations_waiting(double precision, integer) is
$$The conversation sweep (jobs.conversation_sweep): conversations in mode 'agent' with a message
that expects a reply, unanswered for more than p_after_s seconds, and conversations in any mode
with a reply committed that long ago and never handed to its channel (a person's reply or a
notice whose job was lost), with no live lease; ids only (the woken job reads them under its
org). SECURITY DEFINER, for skillet_worker.$$;

-- The mode's clock, across orgs, for the worker's cron: (1) a conversation a person holds with
-- no message from a person for p_idle_s goes back to the agent, its customer messages kept as
-- context (answered by no one: the agent answers what comes next); (2) one notice to a
-- customer waiting for p_wait_s with nobody taking the conversation, committed as an outbox
-- row the returned job delivers (the sweep re-wakes it if that job is lost). 0: never.
create function skillet_conversation_mode_tick(p_idle_s double precision,
                                               p_wait_s double precision,
                                               p_default_notice text, p_limit integer)
returns table(organization_id uuid, conversation_id uuid, change text)
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
    with idle as (
        select c.id from public.conversations c
        where p_idle_s > 0 and c.mode = 'human'
          and coalesce(greatest(c.person_replied_at, c.mode_since), c.handoff_at)
              < now() - make_interval(secs => p_idle_s)
        order by c.mode_since
        limit p_limit
        for update skip locked
    ), returned as (
        update public.conversations c
        set mode = 'agent', held_by = null, mode_since = now(), mode_reason = 'idle',
            mode_cause = null, handoff_at = null, person_replied_at = null,
            wait_notice_at = null
        from idle where c.id = idle.id
        returning c.organization_id, c.id
    ), kept as (
        update public.messages m set context_at = now()
        from returned r
        where m.conversation_id = r.id and m.direction = 'inbound'
          and m.answered_by is null and m.context_at is null
    ), overdue as (
        select c.id, c.organization_id, c.channel,
               (select i.id from public.messages i
                where i.conversation_id = c.id and i.direction = 'inbound'
                order by coalesce(i.received_at, i.created_at) desc, i.id desc limit 1)
                   as last_inbound
        from public.conversations c
        where p_wait_s > 0 and c.mode = 'waiting' and c.wait_notice_at is null
          and c.mode_since < now() - make_interval(secs => p_wait_s)
        order by c.mode_since
        limit p_limit
        for update skip locked
    ), noticed as (
        update public.conversations c set wait_notice_at = now()
        from overdue o where c.id = o.id
        returning c.id
    ), notice as (
        select o.id, o.organization_id, o.channel, o.last_inbound,
               coalesce((select a.handoff_wait_notice from public.agents a
                         where a.organization_id = o.organization_id
                         order by (a.id = (select i.agent_id from public.messages i
                                           where i.id = o.last_inbound)) desc nulls last,
                                  a.created_at, a.id
                         limit 1), p_default_notice) as body,
               gen_random_uuid() as message_id
        from overdue o join noticed n on n.id = o.id
    ), notice_messages as (
        insert into public.messages (id, organization_id, conversation_id, direction, channel,
                                     body, author, route_via_id, created_at)
        select n.message_id, n.organization_id, n.id, 'outbound', n.channel, n.body, 'agent',
               n.last_inbound, clock_timestamp()
        from notice n
        returning id
    ), notice_outbox as (
        insert into public.outbox (organization_id, conversation_id, message_id, body)
        select n.organization_id, n.id, nm.id, n.body
        from notice n join notice_messages nm on nm.id = n.message_id
    )
    select r.organization_id, r.id, 'returned' from returned r
    union all
    select n.organization_id, n.id, 'notice' from notice n
$$;
comment on function skillet_conversation_mode_tick(double precision, double precision, text,
    integer) is
$$The handoff cron (jobs.handoff_tick), across orgs: conversations a person held with no message
from a person for p_idle_s seconds go back to the agent (their unanswered customer messages kept
as context, answered by no one); conversations waiting for p_wait_s seconds with nobody taking
them get one notice (the agent's handoff_wait_notice, else p_default_notice) committed as a
reply with its outbox row; at most p_limit of each; 0 s: never. Returns (org, conversation,
'returned' | 'notice'): the caller wakes each notice's conversation so a holder delivers it.
SECURITY DEFINER, for skillet_worker.$$;
revoke all on function skillet_conversation_mode_tick(double precision, double precision, text,
    integer) from public;
grant execute on function skillet_conversation_mode_tick(double precision, double precision,
    text, integer) to skillet_worker;

create function skillet_conversation_mode_counts()
returns table(mode text, conversations bigint)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select c.mode, count(*) from public.conversations c where c.mode <> 'agent' group by c.mode
$$;
comment on function skillet_conversation_mode_counts() is
$$Conversations not in mode 'agent', by mode, across orgs (counts only), for the worker's gauge
skillet_conversations_by_mode (jobs.handoff_tick). SECURITY DEFINER, for skillet_worker.$$;
revoke all on function skillet_conversation_mode_counts() from public;
grant execute on function skillet_conversation_mode_counts() to skillet_worker;
