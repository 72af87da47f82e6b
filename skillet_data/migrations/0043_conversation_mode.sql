-- The conversation's mode changes in one place: skillet_change_mode. Every change (the turn's
-- handoff, a person taking or releasing it, the owner's phone answering, the idle return, the
-- wait notice) goes through it; its transitions are conversation.mode's, held equal by a test.

create or replace function skillet_change_mode(
    p_conversation uuid, p_transition text, p_held_by text default null,
    p_cause text default null, p_reason text default null, p_replied boolean default false,
    p_keep_pending boolean default true)
returns text
language plpgsql
as $$
#variable_conflict use_column
declare
    v_mode text;
    v_held text;
begin
    select c.mode, c.held_by into v_mode, v_held
    from public.conversations c where c.id = p_conversation for update;
    if not found then
        return null;
    end if;
    if p_transition = 'handoff' and v_mode = 'agent' then
        update public.conversations set mode = 'waiting', held_by = null, mode_since = now(),
            mode_reason = left(p_reason, 500), mode_cause = p_cause, handoff_at = now(),
            person_replied_at = null, wait_notice_at = null
        where id = p_conversation;
        return 'waiting';
    elsif p_transition = 'take' then
        -- mode_since kept when the same person already held it; from the agent it counts as a
        -- handoff with the taker's cause.
        update public.conversations set
            mode_since = case when mode = 'human' and held_by = p_held_by then mode_since
                              else now() end,
            mode_cause = case when mode = 'agent' then p_cause else mode_cause end,
            mode_reason = case when mode = 'agent' then p_reason else mode_reason end,
            handoff_at = coalesce(handoff_at, now()),
            person_replied_at = case when p_replied then now() else person_replied_at end,
            mode = 'human', held_by = p_held_by,
            -- The agent's holder loses its lease: a reply it is still thinking about is refused
            -- at its commit (lease_lost) even if the conversation is back with the agent by then.
            lease_token = null, lease_until = null
        where id = p_conversation;
        return 'human';
    elsif p_transition = 'phone_reply' then
        -- A person who holds it from the console keeps it; otherwise the phone holds it.
        update public.conversations set
            mode_since = case when mode = 'human' then mode_since else now() end,
            mode_cause = case when mode = 'agent' then 'phone' else mode_cause end,
            mode_reason = case when mode = 'agent' then 'respondida pelo celular da empresa'
                               else mode_reason end,
            held_by = case when mode = 'human' then held_by else 'phone' end,
            handoff_at = coalesce(handoff_at, now()),
            person_replied_at = now(),
            mode = 'human', lease_token = null, lease_until = null
        where id = p_conversation;
        return 'human';
    elsif p_transition = 'release' or (p_transition = 'idle_return' and v_mode = 'human') then
        update public.conversations set mode = 'agent', held_by = null, mode_since = now(),
            mode_reason = case when p_transition = 'idle_return' then 'idle'
                               else coalesce(p_reason, 'devolvida ao agente') end,
            mode_cause = null, handoff_at = null, person_replied_at = null,
            wait_notice_at = null
        where id = p_conversation;
        if p_keep_pending or p_transition = 'idle_return' then
            -- What no person answered stays as context for the agent, never a later reply.
            update public.messages set context_at = now()
            where conversation_id = p_conversation and direction = 'inbound'
              and answered_by is null and context_at is null;
        end if;
        return 'agent';
    elsif p_transition = 'wait_notice' and v_mode = 'waiting' then
        update public.conversations c set wait_notice_at = now()
        where c.id = p_conversation and c.wait_notice_at is null;
        return 'waiting';
    end if;
    return null;  -- a transition that does not apply to the current mode: nothing changed
end;
$$;

comment on function skillet_change_mode(uuid, text, text, text, text, boolean, boolean) is
$$Every change of a conversation's mode, under its row lock; returns the mode after, or null when
p_transition does not apply to the current mode (nothing changed). Transitions (conversation.mode
is the readable twin, held equal by a test): 'handoff' agent -> waiting (p_cause, p_reason: the
turn's commit); 'take' any -> human held by p_held_by (p_cause, p_reason when it came from the
agent; p_replied: a person's reply); 'phone_reply' any -> human (the owner's phone: a person
holding it keeps it, else 'phone'); both end the agent holder's lease, so a reply it was still
thinking about is refused at its commit (lease_lost), even after a release; 'release' any -> agent (p_keep_pending: the unanswered
customer messages are kept as context, never answered later); 'idle_return' human -> agent (they
are always kept); 'wait_notice' waiting -> waiting (the "still calling someone" notice is sent,
or skipped, once). The events trigger (skillet_conversation_mode_event) reports each change.$$;

create or replace function skillet_commit_turn(p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[], p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[], p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid, p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text, p_skills jsonb, p_reads jsonb, p_files jsonb)
 RETURNS TABLE(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean, reply_to_external_id text, last_inbound_at timestamp with time zone, route_kind text, route_address text, file_outbox_ids uuid[])
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
#variable_conflict use_column
declare
    v_names text[];
    v_uses bigint[];
    v_views bigint[];
    v_mode text;
    v_held boolean;
begin
    perform skillet_bind_org(p_org, p_proof);
    deliverable := false;
    file_outbox_ids := '{}';
    select c.mode,
           p_lease is null or (c.lease_token = p_lease and c.lease_until > now())
    into v_mode, v_held
    from conversations c where c.id = p_conversation
    for update;
    if not coalesce(v_held, false) then
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
    if jsonb_typeof(p_files) = 'array' and jsonb_array_length(p_files) > 0 then
        -- The reply's files (send_skill_file): a row per file after the text (part 1, 2, ...;
        -- body its caption), pending and never claimed here: the holder claims and sends each
        -- after the text, in order.
        with inserted as (
            insert into outbox (organization_id, conversation_id, message_id, body, part, file)
            select p_org, p_conversation, reply_id, coalesce(f.value ->> 'caption', ''),
                   f.ordinality, f.value
            from jsonb_array_elements(p_files) with ordinality as f(value, ordinality)
            returning id, part
        )
        select array_agg(id order by part) into file_outbox_ids from inserted;
    end if;
    if p_handoff_cause is not null then
        perform skillet_change_mode(p_conversation, 'handoff', p_cause => p_handoff_cause,
                                    p_reason => p_handoff_reason);
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
    if jsonb_typeof(p_reads) = 'array' and jsonb_array_length(p_reads) > 0 then
        perform skillet_bump_file_reads(p_org, p_reads, p_at);
    end if;
    outcome := 'replied';
    return next;
end;
$$;

create or replace function skillet_settle_echo(p_org uuid, p_proof text, p_echo uuid, p_grace_s double precision)
 RETURNS TABLE(outcome text, decided boolean, wait_s double precision, conversation_id uuid, mode_before text, message_id uuid)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
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
    perform skillet_change_mode(v_echo.conversation_id, 'phone_reply');
    update message_echoes set status = 'phone', message_id = v_message, decided_at = now()
    where id = p_echo;
    outcome := 'phone';
    decided := true;
    message_id := v_message;
    return next;
end;
$$;

create or replace function skillet_conversation_mode_tick(p_idle_s double precision,
                                                          p_wait_s double precision,
                                                          p_default_notice text,
                                                          p_limit integer)
returns table(organization_id uuid, conversation_id uuid, change text)
language plpgsql
security definer
set search_path to 'pg_catalog', 'pg_temp'
as $$
#variable_conflict use_column
declare
    r record;
    v_message uuid;
    v_body text;
begin
    for r in
        select c.id, c.organization_id from public.conversations c
        where p_idle_s > 0 and c.mode = 'human'
          and coalesce(greatest(c.person_replied_at, c.mode_since), c.handoff_at)
              < now() - make_interval(secs => p_idle_s)
        order by c.mode_since
        limit p_limit
        for update skip locked
    loop
        if public.skillet_change_mode(r.id, 'idle_return') is not null then
            organization_id := r.organization_id;
            conversation_id := r.id;
            change := 'returned';
            return next;
        end if;
    end loop;
    for r in
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
    loop
        perform public.skillet_change_mode(r.id, 'wait_notice');
        select coalesce((select a.handoff_wait_notice from public.agents a
                         where a.organization_id = r.organization_id
                         order by (a.id = (select i.agent_id from public.messages i
                                           where i.id = r.last_inbound)) desc nulls last,
                                  a.created_at, a.id
                         limit 1), p_default_notice)
        into v_body;
        insert into public.messages (organization_id, conversation_id, direction, channel, body,
                                     author, route_via_id, created_at)
        values (r.organization_id, r.id, 'outbound', r.channel, v_body, 'agent', r.last_inbound,
                clock_timestamp())
        returning id into v_message;
        insert into public.outbox (organization_id, conversation_id, message_id, body)
        values (r.organization_id, r.id, v_message, v_body);
        organization_id := r.organization_id;
        conversation_id := r.id;
        change := 'notice';
        return next;
    end loop;
end;
$$;
