-- A leaner turn: each step of the holder's loop is one statement, a SQL function that binds
-- its org itself, transaction-locally (set_config(..., true) as its first statement), so
-- row-level security applies to everything it does and the binding ends with the statement:
-- the pooled connection needs no bind before it and carries nothing to its next user.
-- Three statements answer a message: take (lease + burst + catalog revision + history),
-- commit (reply, outbox row, counts, delivery claim), mark sent (+ release, or the next
-- burst). All SECURITY INVOKER: they run as the caller's role, under its policies.

create function skillet_bind_org(p_org uuid) returns void
language sql as $$
    select set_config('skillet.organization_id', p_org::text, true)
$$;

-- The next burst of a conversation (org bound by the caller), oldest first: each message
-- with the answering agent of the last one, the org's catalog revision and the history
-- before it. A burst of messages that expect no reply is kept as context here and comes
-- back empty (the holder then lets go, or reads again).
create function skillet_read_burst(
    p_org uuid, p_conversation uuid, p_limit integer, p_history_limit integer
) returns table (
    ids uuid[], external_ids text[], bodies text[], received_ats timestamptz[],
    expects_replies boolean[], agent_ids uuid[],
    agent_id uuid, system_prompt text, model_provider text, model_name text,
    catalog_revision bigint, history_directions text[], history_bodies text[]
)
language plpgsql as $$
#variable_conflict use_column
declare
    v_last_agent uuid;
begin
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
    select coalesce(array_agg(h.direction order by h.created_at, h.id), '{}'),
           coalesce(array_agg(h.body order by h.created_at, h.id), '{}')
    into history_directions, history_bodies
    from (
        select direction, body, created_at, id from messages
        where conversation_id = p_conversation
          and (direction = 'outbound' or answered_by is not null or not expects_reply)
          and not (id = any(ids))
        order by created_at desc, id desc limit p_history_limit
    ) h;
    return next;
end;
$$;

-- Take the conversation's lease (free or expired) under a fresh token and read its first
-- burst. No row: someone holds it. `undelivered`: a committed reply still waits to be handed
-- to its channel (a crash between commit and send): the holder delivers it before reading.
create function skillet_take_conversation(
    p_org uuid, p_conversation uuid, p_lease uuid, p_ttl_s double precision,
    p_limit integer, p_history_limit integer
) returns table (
    channel text, contact_id text, undelivered boolean,
    ids uuid[], external_ids text[], bodies text[], received_ats timestamptz[],
    expects_replies boolean[], agent_ids uuid[],
    agent_id uuid, system_prompt text, model_provider text, model_name text,
    catalog_revision bigint, history_directions text[], history_bodies text[]
)
language plpgsql as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org);
    update conversations c
    set lease_token = p_lease, lease_until = now() + make_interval(secs => p_ttl_s)
    where c.id = p_conversation and (c.lease_until is null or c.lease_until < now())
    returning c.channel, c.contact_id into channel, contact_id;
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
$$;

-- What the reply's sender needs, claiming the row for one send when it has a route (the
-- channel the answered message came in on, else the org's only channel): only such a row
-- leaves the building, so only it could be sent twice by a crash mid-send. No row: it is
-- sent, failed or claimed already.
create function skillet_claim_outbox(p_outbox uuid) returns table (
    reply_to_external_id text, last_inbound_at timestamptz, route_kind text, route_address text
)
language sql as $$
with target as (
    select id, organization_id, conversation_id, message_id from outbox
    where id = p_outbox and status = 'pending' and delivery_claimed_at is null
    for update
), context as (
    select t.id, i.external_id as reply_to_external_id,
           (select max(m.sent_at) from messages m
            where m.conversation_id = t.conversation_id and m.direction = 'inbound')
               as last_inbound_at,
           route.kind as route_kind, route.address as route_address
    from target t
    join messages r on r.id = t.message_id
    left join messages i on i.id = r.reply_to_id
    left join lateral (
        select * from (
            select ch.kind, ch.address, 0 as preference
            from inbound_routes ir join channels ch on ch.id = ir.channel_id
            where ir.organization_id = t.organization_id and ir.external_id = i.external_id
            union all
            select ch.kind, ch.address, 1 from channels ch
            where ch.organization_id = t.organization_id
              and (select count(*) from channels o where o.organization_id = t.organization_id) = 1
        ) candidates order by preference limit 1
    ) route on true
), claimed as (
    update outbox o set delivery_claimed_at = now()
    from context c where o.id = c.id and c.route_kind is not null
)
select reply_to_external_id, last_inbound_at, route_kind, route_address from context
$$;

-- The fenced reply commit (0017's refusals and writes, one definition: 0017's function now
-- calls this one) and, with `p_claim`, the delivery claim of its outbox row in the same
-- transaction, so the sender needs no statement before the send. The claim comes before the
-- usage and rollup increments: those rows are shared by every turn of an org (a day's token
-- usage, a popular skill's counts), so they are locked last, for the shortest time.
-- A crash between this commit and the send leaves a claimed row, which the outbox sweep fails
-- as `delivery_unknown` (as a crash between a separate claim and the send did); a row without
-- a route is not claimed, and the next holder delivers it.
create function skillet_commit_turn(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text,
    p_used text[], p_viewed text[], p_names text[], p_triggers text[],
    p_at timestamptz, p_lease uuid, p_usage jsonb, p_claim boolean default true
) returns table (
    outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
    reply_to_external_id text, last_inbound_at timestamptz, route_kind text, route_address text
)
language plpgsql as $$
#variable_conflict use_column
declare
    v_names text[];
    v_uses bigint[];
    v_views bigint[];
begin
    perform skillet_bind_org(p_org);
    deliverable := false;
    perform 1 from conversations where id = p_conversation for update;
    if p_lease is not null and not exists (
        select 1 from conversations
        where id = p_conversation and lease_token = p_lease and lease_until > now()
    ) then
        outcome := 'lease_lost';
        return next;
        return;
    end if;
    if exists (
        select 1 from messages
        where conversation_id = p_conversation and direction = 'inbound' and answered_by is null
          and expects_reply
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
    insert into messages (organization_id, conversation_id, direction, channel, body, reply_to_id)
    values (p_org, p_conversation, 'outbound', p_channel, p_body, p_batch[cardinality(p_batch)])
    returning id into reply_id;
    update messages set answered_by = reply_id where id = any(p_batch);
    insert into outbox (organization_id, conversation_id, message_id, body)
    values (p_org, p_conversation, reply_id, p_body)
    returning id into outbox_id;
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

-- 0017's signature (and its six-argument form, by the defaults) for workers of the previous
-- release during a rolling deploy: the same commit, without the claim (they claim apart).
-- The org binding (transaction-local) matches the one their connection already carries.
create or replace function skillet_commit_reply(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text,
    p_used text[] default '{}', p_viewed text[] default '{}',
    p_names text[] default '{}', p_triggers text[] default '{}',
    p_at timestamptz default now(), p_lease uuid default null, p_usage jsonb default null
) returns table (outcome text, outbox_id uuid, reply_id uuid)
language sql as $$
    select c.outcome, c.outbox_id, c.reply_id
    from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch, p_first_received,
                             p_body, p_used, p_viewed, p_names, p_triggers, p_at, p_lease,
                             p_usage, false) c
$$;

-- After a send (`p_sent`: the outbox row, with the provider's message ids; null: nothing
-- was sent): mark it sent, then let the conversation go if nothing waits, else read the next
-- burst, all in one statement. `held` false: the lease is no longer this holder's (stop).
create function skillet_continue_conversation(
    p_org uuid, p_conversation uuid, p_lease uuid, p_sent uuid, p_provider_ids text[],
    p_limit integer, p_history_limit integer
) returns table (
    sent boolean, held boolean, released boolean,
    ids uuid[], external_ids text[], bodies text[], received_ats timestamptz[],
    expects_replies boolean[], agent_ids uuid[],
    agent_id uuid, system_prompt text, model_provider text, model_name text,
    catalog_revision bigint, history_directions text[], history_bodies text[]
)
language plpgsql as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org);
    sent := false;
    if p_sent is not null then
        with marked as (
            update outbox set status = 'sent', sent_at = now(), attempts = attempts + 1
            where id = p_sent and status = 'pending'
            returning id, organization_id
        ), receipts as (
            insert into outbox_receipts (organization_id, provider_message_id, outbox_id)
            select marked.organization_id, provider_id, marked.id
            from marked, unnest(coalesce(p_provider_ids, '{}')) as provider_id
            on conflict (organization_id, provider_message_id) do nothing
        )
        select count(*) = 1 into sent from marked;
    end if;
    held := exists (select 1 from conversations
                    where id = p_conversation and lease_token = p_lease);
    released := false;
    if not held then
        return next;
        return;
    end if;
    released := coalesce(skillet_release_lease(p_conversation, p_lease), false);
    if released then
        return next;
        return;
    end if;
    select * into ids, external_ids, bodies, received_ats, expects_replies, agent_ids,
                  agent_id, system_prompt, model_provider, model_name, catalog_revision,
                  history_directions, history_bodies
    from skillet_read_burst(p_org, p_conversation, p_limit, p_history_limit);
    return next;
end;
$$;
