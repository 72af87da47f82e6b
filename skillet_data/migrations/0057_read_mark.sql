-- The read mark costs the turn no statement of its own.
--
-- A model-answered burst was marked read by a statement of its own (skillet_presence_target:
-- a bind, an update of every claimed message row, which `messages`' ten indexes made a non-HOT
-- update, and the number's lookup): about 0.85 ms of PostgreSQL CPU a turn. Now
-- - the take and the continue return the number the burst's last message came to, with its own
--   credentials (skillet_read_target), beside the burst they read already;
-- - the reply's commit, when the burst was shown read (p_read), moves the conversation's read
--   mark (conversations.read_upto: the creation time of the latest customer message shown read)
--   in the row it has locked already;
-- - a person opening the conversation claims what came after the mark (skillet_claim_read), so
--   each message is still marked read once.
-- Drain rule (docs/operations.md): workers older than this release call the old signatures.

alter table conversations add column read_upto timestamptz null;
update conversations v set read_upto = r.upto
from (select conversation_id, max(created_at) as upto from messages
      where direction = 'inbound' and read_at is not null group by conversation_id) r
where r.conversation_id = v.id;

drop function skillet_presence_target(uuid, text, uuid, text, boolean);
drop function skillet_claim_read(uuid, uuid, uuid);
alter table messages drop column read_at;

-- The number a customer's message came to (inbound_routes), its status, own WAHA server and
-- own secrets, in the bound org; no row: it came through no connected number.
create function skillet_read_target(p_org uuid, p_external_id text)
returns table(kind text, address text, status text, waha_base_url text, access_token text,
              waha_api_key text, waha_server_vouched boolean)
language sql stable
as $$
    select c.kind, c.address, c.status, c.waha_base_url, s.access_token, s.waha_api_key,
           c.waha_server_vouched
    from inbound_routes ir
    join channels c on c.id = ir.channel_id
    left join lateral skillet_channel_secrets(c.kind, c.address) s on true
    where ir.organization_id = p_org and ir.external_id = p_external_id
$$;
comment on function skillet_read_target(uuid, text) is
$$The number a customer's message (the provider's id p_external_id) came to, in the bound org
p_org: its kind, address, status, own WAHA server and own secrets (skillet_channel_secrets), what a
read mark is sent with. No row: the message came through no connected number.$$;
revoke all on function skillet_read_target(uuid, text) from public;
grant execute on function skillet_read_target(uuid, text) to skillet_worker, skillet_api;

create function skillet_claim_read(p_org uuid, p_conversation uuid)
returns text
language sql
as $$
    with latest as (
        select m.external_id, m.created_at
        from messages m
        where m.organization_id = p_org and m.conversation_id = p_conversation
          and m.direction = 'inbound' and m.external_id is not null
        order by m.created_at desc, m.id desc
        limit 1
    ), claimed as (
        update conversations v set read_upto = latest.created_at
        from latest
        where v.id = p_conversation and v.organization_id = p_org
          and (v.read_upto is null or v.read_upto < latest.created_at)
        returning latest.external_id
    )
    select external_id from claimed
$$;
comment on function skillet_claim_read(uuid, uuid) is
$$A person opened the conversation: move its read mark (conversations.read_upto) to its latest
customer message and return that message's external id (what the read receipt names: WhatsApp
marks the earlier ones with it), or null when nothing came after the mark. Once per message: a
turn's commit moves the same mark for the burst it showed read (skillet_commit_turn, p_read).$$;
revoke all on function skillet_claim_read(uuid, uuid) from public;
grant execute on function skillet_claim_read(uuid, uuid) to skillet_worker, skillet_api;

-- What the console's read mark is sent with, in one statement that binds its org itself.
create function skillet_presence_target(p_org uuid, p_proof text, p_conversation uuid,
                                        p_external_id text)
returns table(kind text, address text, status text, waha_base_url text, access_token text,
              waha_api_key text, waha_server_vouched boolean, contact_id text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    perform skillet_bind_org(p_org, p_proof);
    return query
        select t.kind, t.address, t.status, t.waha_base_url, t.access_token, t.waha_api_key,
               t.waha_server_vouched, v.contact_id
        from skillet_read_target(p_org, p_external_id) t
        join conversations v on v.id = p_conversation;
end;
$$;
comment on function skillet_presence_target(uuid, text, uuid, text) is
$$A console read mark's target (channels.presence): bind p_org with its proof p_proof, then the
number p_external_id came to (skillet_read_target) and the conversation's customer.$$;

drop function skillet_take_conversation(uuid, uuid, uuid, double precision, integer, integer);
drop function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer,
                                        integer);
drop function skillet_continue_conversation(uuid, uuid, uuid, uuid, text[], integer, integer);
drop function skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer,
                                            integer);
drop function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[],
    text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb);

create function skillet_take_conversation(p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_ttl_s double precision, p_limit integer, p_history_limit integer)
 RETURNS TABLE(channel text, contact_id text, undelivered boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[], contact_name text, route_kind text, route_address text, channel_status text, waha_base_url text, access_token text, waha_api_key text, waha_server_vouched boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'public', 'pg_catalog', 'pg_temp'
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
    if cardinality(ids) > 0 then
        -- The number the burst's last message came to, for its read mark (channels.presence).
        select t.kind, t.address, t.status, t.waha_base_url, t.access_token, t.waha_api_key,
               t.waha_server_vouched
        into route_kind, route_address, channel_status, waha_base_url, access_token,
             waha_api_key, waha_server_vouched
        from skillet_read_target(p_org, external_ids[cardinality(external_ids)]) t;
    end if;
    return next;
end;
$function$;

create function skillet_continue_conversation(p_org uuid, p_proof text, p_conversation uuid, p_lease uuid, p_sent uuid, p_provider_ids text[], p_limit integer, p_history_limit integer)
 RETURNS TABLE(sent boolean, held boolean, released boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[], route_kind text, route_address text, channel_status text, waha_base_url text, access_token text, waha_api_key text, waha_server_vouched boolean)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'public', 'pg_catalog', 'pg_temp'
AS $function$
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
    if cardinality(ids) > 0 then
        -- The number the burst's last message came to, for its read mark (channels.presence).
        select t.kind, t.address, t.status, t.waha_base_url, t.access_token, t.waha_api_key,
               t.waha_server_vouched
        into route_kind, route_address, channel_status, waha_base_url, access_token,
             waha_api_key, waha_server_vouched
        from skillet_read_target(p_org, external_ids[cardinality(external_ids)]) t;
    end if;
    return next;
end;
$function$;

create function skillet_commit_turn(p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[], p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[], p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid, p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text, p_skills jsonb, p_reads jsonb, p_files jsonb, p_read boolean)
 RETURNS TABLE(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean, reply_to_external_id text, last_inbound_at timestamp with time zone, route_kind text, route_address text, file_outbox_ids uuid[])
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'public', 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
declare
    v_names text[];
    v_uses bigint[];
    v_views bigint[];
    v_mode text;
    v_held boolean;
    v_open bigint;
    v_last_created timestamptz;
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
    select count(*), max(created_at) into v_open, v_last_created
    from messages
    where id = any(p_batch) and direction = 'inbound' and answered_by is null;
    if v_open <> cardinality(p_batch) then
        outcome := 'answered';
        return next;
        return;
    end if;
    -- The choices' note (send_choices) ends the stored reply, never its sent text: the
    -- history shows what was offered, and a customer's "2" is read against it.
    insert into messages (organization_id, conversation_id, direction, channel, body,
                          reply_to_id, author, skills)
    values (p_org, p_conversation, 'outbound', p_channel,
            p_body || coalesce((select f.value ->> 'note'
                                from jsonb_array_elements(
                                    case when jsonb_typeof(p_files) = 'array' then p_files
                                         else '[]'::jsonb end) f(value)
                                where f.value ? 'choices' limit 1), ''),
            p_batch[cardinality(p_batch)], 'agent', p_skills)
    returning id into reply_id;
    update messages set answered_by = reply_id where id = any(p_batch);
    insert into outbox (organization_id, conversation_id, message_id, body)
    values (p_org, p_conversation, reply_id, p_body)
    returning id into outbox_id;
    if jsonb_typeof(p_files) = 'array' and jsonb_array_length(p_files) > 0 then
        -- The reply's files (send_skill_file), then its choices: a row per part after the text
        -- (part 1, 2, ...; body a file's caption), pending and never claimed here: the holder claims and sends each
        -- after the text, in order.
        -- An element {"choices": ...} (send_choices, always last) is the choices part: its
        -- row keeps them in `choices`, its body their text.
        with inserted as (
            insert into outbox (organization_id, conversation_id, message_id, body, part, file,
                                choices)
            select p_org, p_conversation, reply_id,
                   case when f.value ? 'choices' then coalesce(f.value #>> '{choices,text}', '')
                        else coalesce(f.value ->> 'caption', '') end,
                   f.ordinality,
                   case when f.value ? 'choices' then null else f.value end,
                   f.value -> 'choices'
            from jsonb_array_elements(p_files) with ordinality as f(value, ordinality)
            returning id, part
        )
        select array_agg(id order by part) into file_outbox_ids from inserted;
    end if;
    if p_handoff_cause is not null then
        perform skillet_change_mode(p_conversation, 'handoff', p_cause => p_handoff_cause,
                                    p_reason => p_handoff_reason);
    end if;
    if p_read then
        -- The burst was shown read when the model was asked (channels.presence): a person
        -- opening the conversation marks only what came after it.
        update conversations set read_upto = greatest(read_upto, v_last_created)
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
$function$;

create function skillet_take_conversation(p_org uuid, p_conversation uuid, p_lease uuid, p_ttl_s double precision, p_limit integer, p_history_limit integer)
 RETURNS TABLE(channel text, contact_id text, undelivered boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[], contact_name text, route_kind text, route_address text, channel_status text, waha_base_url text, access_token text, waha_api_key text, waha_server_vouched boolean)
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

create function skillet_continue_conversation(p_org uuid, p_conversation uuid, p_lease uuid, p_sent uuid, p_provider_ids text[], p_limit integer, p_history_limit integer)
 RETURNS TABLE(sent boolean, held boolean, released boolean, ids uuid[], external_ids text[], bodies text[], received_ats timestamp with time zone[], expects_replies boolean[], agent_ids uuid[], agent_id uuid, system_prompt text, model_provider text, model_name text, catalog_revision bigint, history_directions text[], history_bodies text[], route_kind text, route_address text, channel_status text, waha_base_url text, access_token text, waha_api_key text, waha_server_vouched boolean)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
    return query
    select * from skillet_continue_conversation(
        p_org, current_setting('skillet.organization_proof', true), p_conversation, p_lease,
        p_sent, p_provider_ids, p_limit, p_history_limit);
end;
$function$;

comment on function skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer, integer) IS
$$Step one of a turn: bind the org with its proof, take the conversation's lease (free or expired)
under a fresh token for p_ttl_s seconds and read its first burst (skillet_read_burst). No row:
someone else holds it. `undelivered`: a committed reply still waits to be handed to its channel
(a crash between commit and send): the holder delivers it before reading. `contact_name`: the
customer's WhatsApp profile name (null: none known). `route_kind` to `waha_server_vouched`: the
number the burst's last message came to, for its read mark (skillet_read_target; null: none).$$;
comment on function skillet_take_conversation(uuid, uuid, uuid, double precision, integer, integer) IS
$$The take without a proof argument (the transaction's proof, or the operator's role): as
skillet_take_conversation(uuid, text, ...).$$;
comment on function skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer, integer) IS
$$Step three of a turn, after the send (`p_sent`: the outbox row, with the provider's message ids;
null: nothing was sent): bind the org with its proof, mark the row sent and store its receipts,
then let the conversation go if nothing waits (skillet_release_lease), else read the next burst
(skillet_read_burst), all in one statement. `held` false: the lease is no longer this holder's
(stop). With a burst, the number its last message came to, as skillet_take_conversation.$$;
comment on function skillet_continue_conversation(uuid, uuid, uuid, uuid, text[], integer, integer) IS
$$The continue without a proof argument (the transaction's proof, or the operator's role): as
skillet_continue_conversation(uuid, text, ...).$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb, boolean) IS
$$The reply commit, step two of a turn: bind the org with its proof, then the fenced commit.
Serialized on the conversation row (as is every change of its mode); refused with outcome
'lease_lost' (p_lease is not the live lease), 'taken_over' (the conversation's mode is no longer
'agent': a person holds it or was asked for), 'overtaken' (an older message that expects a reply
is still open, not kept as context: read again) or 'answered' (part of the burst was answered
first); else 'replied': the reply (author 'agent', p_skills: the skills the turn used), its
outbox row, the 'answered' marks, the reply's files (p_files, a jsonb array from
send_skill_file: one pending, unclaimed outbox row per file after the text, part 1, 2, ...; then
an element {"choices", "note"} from send_choices, the last part, kept in outbox.choices, its
note appended to the reply message's body (not to the text sent); file_outbox_ids lists them in
order), with p_handoff_cause ('tool' | 'customer') the conversation put in 'waiting' for
p_handoff_reason, the turn's counts (skillet_bump_usage, skillet_bump_activation_daily,
skillet_bump_token_usage; p_reads, [{"skill", "path"}]: skillet_bump_file_reads) and, with
p_claim, the delivery claim of its text row (skillet_claim_outbox), so the sender needs no
statement before the send. With p_read (the burst was shown read: the model was asked), the
conversation's read mark (read_upto) moves to the burst's newest message. The claim comes before the increments: those rows are shared by every
turn of an org, so they are locked last, for the shortest time. A crash between this commit and
the send leaves a claimed row, which skillet_fail_abandoned_claims fails as `delivery_unknown`;
a row without a route is not claimed, and the next holder delivers it.$$;

-- The away message commits as a turn does (it shows nothing read: no model was asked).
create or replace function skillet_commit_away(p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[], p_first_received timestamp with time zone, p_body text, p_at timestamp with time zone, p_lease uuid, p_period timestamp with time zone)
 RETURNS TABLE(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean, reply_to_external_id text, last_inbound_at timestamp with time zone, route_kind text, route_address text)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
declare
    v_period timestamptz;
    v_mode text;
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    perform skillet_bind_org(p_org);
    select c.away_period, c.mode into v_period, v_mode
    from conversations c where c.id = p_conversation for update;
    if v_period is distinct from p_period then
        -- The period's first burst: the away message is its reply (fenced, claimed).
        select c.outcome, c.outbox_id, c.reply_id, c.deliverable, c.reply_to_external_id,
               c.last_inbound_at, c.route_kind, c.route_address
        into outcome, outbox_id, reply_id, deliverable, reply_to_external_id,
             last_inbound_at, route_kind, route_address
        from skillet_commit_turn(p_org, p_proof, p_conversation, p_channel, p_batch,
                                 p_first_received, p_body, '{}', '{}', '{}', '{}', p_at, p_lease,
                                 null, true, null, null, '[]'::jsonb, null, null, false) c;
        if outcome = 'replied' then
            update conversations set away_period = p_period where id = p_conversation;
        end if;
        return next;
        return;
    end if;
    -- Sent already this period: the burst is kept as context (history), never answered later.
    deliverable := false;
    if p_lease is not null and not exists (
        select 1 from conversations
        where id = p_conversation and lease_token = p_lease and lease_until > now()
    ) then
        outcome := 'lease_lost';
    elsif v_mode <> 'agent' then
        outcome := 'taken_over';
    else
        update messages set context_at = now()
        where id = any(p_batch) and direction = 'inbound' and answered_by is null
          and context_at is null;
        outcome := 'kept';
    end if;
    return next;
end;
$function$;

-- As the turn's other statements: owned by skillet_bound, each binding its org first.
grant create on schema public to skillet_bound;
do $$
declare
    f regprocedure;
begin
    foreach f in array array[
        'skillet_take_conversation(uuid, text, uuid, uuid, double precision, integer, integer)',
        'skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[],
    text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb, boolean)',
        'skillet_continue_conversation(uuid, text, uuid, uuid, uuid, text[], integer,
            integer)',
        'skillet_presence_target(uuid, text, uuid, text)']::regprocedure[]
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
grant execute on function skillet_presence_target(uuid, text, uuid, text) to skillet_api;
