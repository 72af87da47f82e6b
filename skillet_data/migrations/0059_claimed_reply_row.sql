-- The reply's text row is written claimed. The commit wrote it pending, then claimed it
-- (skillet_claim_outbox): a second version of the row (an outbox update is never HOT: the
-- claim is in an index's predicate), its four index entries, and a lookup of the row just
-- written. The route is now looked up first (skillet_outbox_route, which skillet_claim_outbox
-- uses as well, so the claim's rules have one home) and the row inserted with its claim.

create function skillet_outbox_route(
    p_org uuid, p_conversation uuid, p_outbox uuid, p_created timestamptz, p_part smallint,
    p_reply_to uuid, p_via uuid
) returns table (reply_to_external_id text, last_inbound_at timestamptz, route_kind text,
                 route_address text)
language plpgsql
as $function$
#variable_conflict use_column
declare
    v_answered_external text;
begin
    if exists (
        select 1 from outbox e
        where e.conversation_id = p_conversation and e.status = 'pending'
          and e.delivery_claimed_at is null and e.id is distinct from p_outbox
          and (e.created_at, e.part) < (p_created, p_part)
    ) then
        return;  -- an earlier row of the conversation waits: this one goes after it
    end if;
    if p_via is not null then
        select i.external_id into v_answered_external from messages i where i.id = p_via;
    end if;
    reply_to_external_id := case when p_reply_to is not null then v_answered_external end;
    select m.sent_at into last_inbound_at from messages m
    where m.conversation_id = p_conversation and m.direction = 'inbound'
    order by m.sent_at desc nulls last
    limit 1;
    if v_answered_external is not null then
        select ch.kind, ch.address into route_kind, route_address
        from inbound_routes ir join channels ch on ch.id = ir.channel_id
        where ir.organization_id = p_org and ir.external_id = v_answered_external;
    end if;
    if route_kind is null then
        select ch.kind, ch.address into route_kind, route_address
        from channels ch
        where ch.organization_id = p_org
          and (select count(*) from channels o where o.organization_id = p_org) = 1;
    end if;
    return next;
end;
$function$;
comment on function skillet_outbox_route(uuid, uuid, uuid, timestamptz, smallint, uuid, uuid) is
$$How an outbox row of p_conversation written at p_created as part p_part would leave, for its
claim (skillet_claim_outbox for a row written, skillet_commit_turn for the reply's text row
before it is written, p_outbox null): the channel the answered message (p_via) came in on, else
the org's only channel (route_kind null: no route), reply_to_external_id only with p_reply_to (an
agent's reply), and the conversation's last customer message time. No row: an earlier row of the
conversation waits unclaimed, so this one goes after it (rows leave in (created_at, part) order).$$;

create or replace function skillet_claim_outbox(p_outbox uuid)
 RETURNS TABLE(reply_to_external_id text, last_inbound_at timestamp with time zone, route_kind text, route_address text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
declare
    v_org uuid;
    v_conversation uuid;
    v_message uuid;
    v_status text;
    v_claimed_at timestamptz;
    v_created timestamptz;
    v_part smallint;
    v_reply_to uuid;
    v_via uuid;
begin
    select o.organization_id, o.conversation_id, o.message_id, o.status, o.delivery_claimed_at,
           o.created_at, o.part
    into v_org, v_conversation, v_message, v_status, v_claimed_at, v_created, v_part
    from outbox o where o.id = p_outbox
    for update;
    if v_org is null or v_status <> 'pending' or v_claimed_at is not null then
        return;
    end if;
    select r.reply_to_id, coalesce(r.reply_to_id, r.route_via_id) into v_reply_to, v_via
    from messages r where r.id = v_message;
    select k.reply_to_external_id, k.last_inbound_at, k.route_kind, k.route_address
    into reply_to_external_id, last_inbound_at, route_kind, route_address
    from skillet_outbox_route(v_org, v_conversation, p_outbox, v_created, v_part, v_reply_to,
                              v_via) k;
    if not found then
        return;  -- an earlier row of the conversation waits: this one goes after it
    end if;
    if route_kind is not null then
        update outbox set delivery_claimed_at = now() where id = p_outbox;
    end if;
    return next;
end;
$function$;

-- Replaced as 0057 made it: dropped, created, then owned by skillet_bound.
drop function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb, boolean);

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
    if p_claim then
        -- The text row's claim, decided before the row exists (skillet_outbox_route, as
        -- skillet_claim_outbox decides it): the row is written claimed, not written then
        -- updated (an outbox update is never HOT: the claim is in an index's predicate).
        select true, r.reply_to_external_id, r.last_inbound_at, r.route_kind, r.route_address
        into deliverable, reply_to_external_id, last_inbound_at, route_kind, route_address
        from skillet_outbox_route(p_org, p_conversation, null, now(), 0::smallint,
                                  p_batch[cardinality(p_batch)],
                                  p_batch[cardinality(p_batch)]) r;
        deliverable := coalesce(deliverable, false);
    end if;
    insert into outbox (organization_id, conversation_id, message_id, body, delivery_claimed_at)
    values (p_org, p_conversation, reply_id, p_body,
            case when route_kind is not null then now() end)
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
p_claim, the delivery claim of its text row (written claimed when it has a route:
skillet_outbox_route), so the sender needs no statement before the send. With p_read (the burst was shown read: the model was asked), the
conversation's read mark (read_upto) moves to the burst's newest message. The claim comes before
the increments: those rows are shared by every turn of an org, so they are locked last, for the
shortest time. A crash between this commit and the send leaves a claimed row, which
skillet_fail_abandoned_claims fails as `delivery_unknown`; a row without a route is not claimed,
and the next holder delivers it.$$;

grant create on schema public to skillet_bound;
do $$
declare
    f regprocedure := 'skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb, boolean)'::regprocedure;
begin
    execute format('alter function %s owner to skillet_bound', f);
    execute format('revoke all on function %s from public', f);
    execute format('grant execute on function %s to skillet_worker', f);
end
$$;
revoke create on schema public from skillet_bound;
