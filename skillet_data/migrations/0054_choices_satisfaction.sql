-- Choices the customer taps (send_choices, the satisfaction question): a reply's last part,
-- an outbox row of its own whose `choices` say what to send (Cloud API buttons or a list,
-- WAHA a numbered text), claimed, sent, marked and receipted like a file part, in order.

alter table outbox
    add column choices jsonb null,
    add constraint outbox_one_kind_of_part check (file is null or choices is null);

-- The reply commit, same signature (one live form): an element {"choices", "note"} of
-- p_files is the choices part; its note ends the reply message's stored body.
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

comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone, text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text, text, jsonb, jsonb, jsonb) is
$$The reply commit, step two of a turn: bind the org with its proof, then the fenced commit.
Serialized on the conversation row (as is every change of its mode); refused with outcome
'lease_lost' (p_lease is not the live lease), 'taken_over' (the conversation's mode is no longer
'agent': a person holds it or was asked for), 'overtaken' (an older message that expects a reply
is still open, not kept as context: read again) or 'answered' (part of the burst was answered
first); else 'replied': the reply (author 'agent', p_skills: the skills the turn used), its
outbox row, the 'answered' marks, the reply's files (p_files, a jsonb array from
send_skill_file: one pending, unclaimed outbox row per file after the text, part 1, 2, ...;
then an element {"choices", "note"} from send_choices, the last part, kept in outbox.choices,
its note appended to the reply message's body (not to the text sent);
file_outbox_ids lists them in order), with p_handoff_cause ('tool' | 'customer') the
conversation put in 'waiting' for p_handoff_reason, the turn's counts (skillet_bump_usage,
skillet_bump_activation_daily, skillet_bump_token_usage; p_reads, [{"skill", "path"}]:
skillet_bump_file_reads) and, with p_claim, the delivery claim of its text row
(skillet_claim_outbox), so the sender needs no statement before the send. The claim comes before
the increments: those rows are shared by every turn of an org, so they are locked last, for the
shortest time. A crash between this commit and the send leaves a claimed row, which
skillet_fail_abandoned_claims fails as `delivery_unknown`; a row without a route is not claimed,
and the next holder delivers it.$$;

-- Satisfaction (off by default): when a person releases a conversation they answered, the
-- customer gets one question with three buttons (texts of at most 20 characters each).
alter table organizations
    add column satisfaction boolean not null default false,
    add column satisfaction_buttons text[] not null
        default array['😀 Ótimo', '😐 Ok', '🙁 Ruim']
        check (cardinality(satisfaction_buttons) = 3
               and array_position(satisfaction_buttons, null) is null
               and char_length(satisfaction_buttons[1]) between 1 and 20
               and char_length(satisfaction_buttons[2]) between 1 and 20
               and char_length(satisfaction_buttons[3]) between 1 and 20);
grant update (satisfaction, satisfaction_buttons) on organizations to skillet_api;

-- One question per conversation per org-day (the org's time zone), asked for whoever held it
-- (`person:<uuid>`, or an API key's prefix until people have accounts); the customer's tap
-- (score 3 good, 2 ok, 1 bad) and the text they wrote right after it, its comment.
create table satisfaction_surveys (
    id                 uuid primary key default gen_random_uuid(),
    organization_id    uuid not null references organizations (id),
    conversation_id    uuid not null references conversations (id),
    question_id        uuid not null references messages (id),
    held_by            text not null check (char_length(held_by) <= 64),
    org_day            date not null,
    asked_at           timestamptz not null default now(),
    score              smallint null check (score between 1 and 3),
    answer             text null check (char_length(answer) <= 20),
    answer_message_id  uuid null references messages (id),
    answered_at        timestamptz null,
    comment            text null check (char_length(comment) <= 2000),
    comment_message_id uuid null references messages (id),
    unique (conversation_id, org_day)
);
create index satisfaction_surveys_answered_idx
    on satisfaction_surveys (organization_id, answered_at) where answered_at is not null;
create index satisfaction_surveys_open_idx
    on satisfaction_surveys (conversation_id, asked_at desc);

alter table satisfaction_surveys enable row level security;
alter table satisfaction_surveys force row level security;
create policy tenant_isolation on satisfaction_surveys
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on satisfaction_surveys as permissive for all to skillet_system
    using (true) with check (true);
revoke all on satisfaction_surveys from public;
grant select, insert on satisfaction_surveys to skillet_api;
grant select, update (score, answer, answer_message_id, answered_at, comment, comment_message_id)
    on satisfaction_surveys to skillet_worker;
