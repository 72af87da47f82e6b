-- The reply's claim read the org's whole history on every turn: one statement whose generic plan
-- (the turn runs with plan_cache_mode = force_generic_plan) hash-joined every message of the org
-- to find the answered one (`i.id = coalesce(...)`), took the conversation's last inbound time
-- through the org's inbound index, and found the outbox row through the pending index. Its cost
-- grew with the org's messages (4.5 ms a turn at 4,000). Here each lookup is its own statement,
-- by primary key or by an index that answers it in one probe, so its cost is the same at any
-- size.

-- The conversation's last inbound message by the time it was sent (the 24-hour window).
create index messages_inbound_sent_idx on messages (conversation_id, sent_at desc nulls last)
    where direction = 'inbound';

create or replace function skillet_claim_outbox(p_outbox uuid)
returns table(reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
as $$
#variable_conflict use_column
declare
    v_org uuid;
    v_conversation uuid;
    v_message uuid;
    v_status text;
    v_claimed_at timestamptz;
    v_reply_to uuid;
    v_via uuid;
    v_answered_external text;
begin
    select o.organization_id, o.conversation_id, o.message_id, o.status, o.delivery_claimed_at
    into v_org, v_conversation, v_message, v_status, v_claimed_at
    from outbox o where o.id = p_outbox
    for update;
    if v_org is null or v_status <> 'pending' or v_claimed_at is not null then
        return;
    end if;
    select r.reply_to_id, coalesce(r.reply_to_id, r.route_via_id) into v_reply_to, v_via
    from messages r where r.id = v_message;
    if v_via is not null then
        select i.external_id into v_answered_external from messages i where i.id = v_via;
    end if;
    reply_to_external_id := case when v_reply_to is not null then v_answered_external end;
    select m.sent_at into last_inbound_at from messages m
    where m.conversation_id = v_conversation and m.direction = 'inbound'
    order by m.sent_at desc nulls last
    limit 1;
    if v_answered_external is not null then
        select ch.kind, ch.address into route_kind, route_address
        from inbound_routes ir join channels ch on ch.id = ir.channel_id
        where ir.organization_id = v_org and ir.external_id = v_answered_external;
    end if;
    if route_kind is null then
        select ch.kind, ch.address into route_kind, route_address
        from channels ch
        where ch.organization_id = v_org
          and (select count(*) from channels o where o.organization_id = v_org) = 1;
    end if;
    if route_kind is not null then
        update outbox set delivery_claimed_at = now() where id = p_outbox;
    end if;
    return next;
end;
$$;
comment on function skillet_claim_outbox(uuid) is
$$What the reply's sender needs, claiming the outbox row for one send when it has a route (the
channel the answered message came in on, or for a person's reply or a notice the one it
route_via_id names, else the org's only channel): only such a row leaves the building, so only
it could be sent twice by a crash mid-send. reply_to_external_id only for an agent's reply (the
message it answers). No row: it is sent, failed or claimed already. Each lookup is by primary key
or one index probe: its cost does not grow with the org's history.$$;

-- Every policy asks skillet_current_org() once per statement and table (about 40 times a turn),
-- and a function's own `SET search_path` costs as much as its work: it is saved and restored on
-- every call. These two name everything by its schema instead (operators through OPERATOR(),
-- types as pg_catalog's), so no object of anyone's can stand in for ours without the pin.
create or replace function skillet_current_org()
returns uuid
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
alter function skillet_current_org() reset search_path;
comment on function skillet_current_org() is
$$The org the current statement acts for: the bound org (skillet.organization_id) only when its
proof (skillet.organization_proof) holds, else null. Policies call it as (select
skillet_current_org()), once per statement. SECURITY DEFINER with every name schema-qualified
(no search_path pin: it would cost as much as the check).$$;

create or replace function skillet_org_proof_valid(p_org text, p_proof text)
returns boolean
language plpgsql stable security definer
as $$
begin
    return p_proof is not null and p_proof OPERATOR(pg_catalog.=) (
        select pg_catalog.encode(
                   pg_catalog.sha256(s.outer_pad OPERATOR(pg_catalog.||) pg_catalog.sha256(
                       s.inner_pad OPERATOR(pg_catalog.||) pg_catalog.convert_to(p_org, 'UTF8'))),
                   'hex')
        from skillet_private.tenant_binding_secret s);
end;
$$;
alter function skillet_org_proof_valid(text, text) reset search_path;
comment on function skillet_org_proof_valid(text, text) is
$$Whether p_proof is the HMAC-SHA256 of p_org under the tenant secret; answers yes or no, never a
proof or the secret. SECURITY DEFINER with every name schema-qualified, as skillet_current_org.$$;

-- The turn's three statements each went through two functions: one that set the proof and
-- called, with `return query select *`, the one that bound the org (validating the proof again
-- in skillet_bind_org) and did the work. Now the proof-taking form does the work and binds in one
-- call; the forms without a proof (workers of an earlier release, the operator's role) call it
-- with the transaction's proof.
create or replace function skillet_bind_org(p_org uuid, p_proof text)
returns void
language plpgsql
as $$
begin
    if not (skillet_org_proof_valid(p_org::text, p_proof) or skillet_is_system()) then
        raise exception 'tenant_binding_refused: no valid proof for organization %', p_org
            using errcode = '42501';
    end if;
    perform set_config('skillet.organization_proof', p_proof, true),
            set_config('skillet.organization_id', p_org::text, true);
end;
$$;
comment on function skillet_bind_org(uuid, text) is
$$Bind an org and its proof for the rest of the transaction, in one call; refused (42501,
tenant_binding_refused) unless p_proof is the org's (members of skillet_system need none).$$;

create or replace function skillet_take_conversation(
    p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_ttl_s double precision,
    p_limit integer, p_history_limit integer)
returns table(channel text, contact_id text, undelivered boolean, ids uuid[],
              external_ids text[], bodies text[], received_ats timestamp with time zone[],
              expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text,
              model_provider text, model_name text, catalog_revision bigint,
              history_directions text[], history_bodies text[])
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org, p_proof);
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
comment on function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer,
                                               integer) is
$$Step one of a turn: bind the org with its proof, take the conversation's lease (free or expired)
under a fresh token for p_ttl_s seconds and read its first burst (skillet_read_burst). No row:
someone else holds it. `undelivered`: a committed reply still waits to be handed to its channel
(a crash between commit and send): the holder delivers it before reading.$$;

create or replace function skillet_take_conversation(
    p_org uuid, p_conversation uuid, p_lease uuid, p_ttl_s double precision, p_limit integer,
    p_history_limit integer)
returns table(channel text, contact_id text, undelivered boolean, ids uuid[],
              external_ids text[], bodies text[], received_ats timestamp with time zone[],
              expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text,
              model_provider text, model_name text, catalog_revision bigint,
              history_directions text[], history_bodies text[])
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
begin
    return query
    select * from skillet_take_conversation(
        p_org, current_setting('skillet.organization_proof', true), p_conversation, p_lease,
        p_ttl_s, p_limit, p_history_limit);
end;
$$;
comment on function skillet_take_conversation(uuid, uuid, uuid, double precision, integer,
                                               integer) is
$$The take without a proof argument (the transaction's proof, or the operator's role): as
skillet_take_conversation(uuid, text, ...).$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb, p_reads jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
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
    if jsonb_typeof(p_reads) = 'array' and jsonb_array_length(p_reads) > 0 then
        perform skillet_bump_file_reads(p_org, p_reads, p_at);
    end if;
    outcome := 'replied';
    return next;
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text,
    text, jsonb, jsonb) is
$$Step two of a turn: bind the org with its proof, then the fenced reply commit. Serialized on the
conversation row (as is every change of its mode); refused with outcome 'lease_lost' (p_lease is
not the live lease), 'taken_over' (the conversation's mode is no longer 'agent': a person holds
it or was asked for), 'overtaken' (an older message that expects a reply is still open, not kept
as context: read again) or 'answered' (part of the burst was answered first); else 'replied':
the reply (author 'agent', p_skills: the skills the turn used), its outbox row, the 'answered'
marks, with p_handoff_cause ('tool' | 'customer') the conversation put in 'waiting' for
p_handoff_reason, the turn's counts (skillet_bump_usage, skillet_bump_activation_daily,
skillet_bump_token_usage; p_reads, [{"skill", "path"}]: skillet_bump_file_reads) and, with
p_claim, the delivery claim of its outbox row
(skillet_claim_outbox), so the sender needs no statement before the send. The claim comes before
the increments: those rows are shared by every turn of an org, so they are locked last, for the
shortest time. A crash between this commit and the send leaves a claimed row, which
skillet_fail_abandoned_claims fails as `delivery_unknown`; a row without a route is not claimed,
and the next holder delivers it.$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
begin
    return query
    select * from skillet_commit_turn(
        p_org, p_proof, p_conversation, p_channel, p_batch, p_first_received, p_body, p_used,
        p_viewed, p_names, p_triggers, p_at, p_lease, p_usage, p_claim, p_handoff_cause,
        p_handoff_reason, p_skills, null::jsonb);
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text,
    text, jsonb) is
$$The reply commit of workers of an earlier release, with the org's proof, a handoff and the
skills used: the nineteen-argument skillet_commit_turn with no file reads.$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
begin
    return query
    select * from skillet_commit_turn(
        p_org, current_setting('skillet.organization_proof', true), p_conversation, p_channel,
        p_batch, p_first_received, p_body, p_used, p_viewed, p_names, p_triggers, p_at, p_lease,
        p_usage, p_claim, p_handoff_cause, p_handoff_reason, p_skills, null::jsonb);
end;
$$;
comment on function skillet_commit_turn(uuid, uuid, text, uuid[], timestamp with time zone, text,
    text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text,
    jsonb) is
$$The reply commit without a proof argument (the transaction's proof, or the operator's role): as
skillet_commit_turn(uuid, text, ...) with a handoff and the skills used.$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
begin
    return query
    select * from skillet_commit_turn(p_org, p_proof, p_conversation, p_channel, p_batch,
                                      p_first_received, p_body, p_used, p_viewed, p_names,
                                      p_triggers, p_at, p_lease, p_usage, p_claim,
                                      null::text, null::text, null::jsonb, null::jsonb);
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean) is
$$The reply commit of workers of an earlier release, with the org's proof: the nineteen-argument
skillet_commit_turn with no handoff and no skills recorded, same outcomes.$$;

create or replace function skillet_commit_turn(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean default true)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text)
language sql
set plan_cache_mode to 'force_generic_plan'
as $$
    select * from skillet_commit_turn(p_org, current_setting('skillet.organization_proof', true),
                                      p_conversation, p_channel, p_batch, p_first_received,
                                      p_body, p_used, p_viewed, p_names, p_triggers, p_at,
                                      p_lease, p_usage, p_claim, null::text, null::text,
                                      null::jsonb, null::jsonb)
$$;
comment on function skillet_commit_turn(uuid, uuid, text, uuid[], timestamp with time zone, text,
    text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean) is
$$The reply commit of workers of an earlier release (and of skillet_commit_reply), without a proof
argument: the nineteen-argument skillet_commit_turn with no handoff and no skills recorded.$$;

create or replace function skillet_continue_conversation(
    p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_sent uuid,
    p_provider_ids text[], p_limit integer, p_history_limit integer)
returns table(sent boolean, held boolean, released boolean, ids uuid[], external_ids text[],
              bodies text[], received_ats timestamp with time zone[], expects_replies boolean[],
              agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text,
              model_name text, catalog_revision bigint, history_directions text[],
              history_bodies text[])
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org, p_proof);
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
comment on function skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer,
                                                  integer) is
$$Step three of a turn, after the send (`p_sent`: the outbox row, with the provider's message ids;
null: nothing was sent): bind the org with its proof, mark the row sent and store its receipts,
then let the conversation go if nothing waits (skillet_release_lease), else read the next burst
(skillet_read_burst), all in one statement. `held` false: the lease is no longer this holder's
(stop).$$;

create or replace function skillet_continue_conversation(
    p_org uuid, p_conversation uuid, p_lease uuid, p_sent uuid, p_provider_ids text[],
    p_limit integer, p_history_limit integer)
returns table(sent boolean, held boolean, released boolean, ids uuid[], external_ids text[],
              bodies text[], received_ats timestamp with time zone[], expects_replies boolean[],
              agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text,
              model_name text, catalog_revision bigint, history_directions text[],
              history_bodies text[])
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
begin
    return query
    select * from skillet_continue_conversation(
        p_org, current_setting('skillet.organization_proof', true), p_conversation, p_lease,
        p_sent, p_provider_ids, p_limit, p_history_limit);
end;
$$;
comment on function skillet_continue_conversation(uuid, uuid, uuid, uuid, text[], integer,
                                                  integer) is
$$The continue without a proof argument (the transaction's proof, or the operator's role): as
skillet_continue_conversation(uuid, text, ...).$$;
