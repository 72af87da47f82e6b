-- A reply has parts: its text (part 0), then the skill files the turn chose to send
-- (send_skill_file), each an outbox row of its own (part 1, 2, ...; `file` says what to send),
-- so each is claimed, sent, marked and receipted on its own, at most once, in order.

alter table outbox
    add column part smallint not null default 0 check (part >= 0),
    add column file jsonb null;
alter table outbox drop constraint outbox_message_id_key;
alter table outbox add constraint outbox_message_part_key unique (message_id, part);

-- The reply commit with the turn's files: the commit of migration 0033, then (when it
-- replied) one pending, unclaimed row per file after the text row, in the same transaction.
create or replace function skillet_commit_turn(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamp with time zone, p_body text, p_used text[], p_viewed text[],
    p_names text[], p_triggers text[], p_at timestamp with time zone, p_lease uuid,
    p_usage jsonb, p_claim boolean, p_handoff_cause text, p_handoff_reason text,
    p_skills jsonb, p_reads jsonb, p_files jsonb)
returns table(outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
              reply_to_external_id text, last_inbound_at timestamp with time zone,
              route_kind text, route_address text, file_outbox_ids uuid[])
language plpgsql
set plan_cache_mode to 'force_generic_plan'
as $$
#variable_conflict use_column
begin
    select c.outcome, c.outbox_id, c.reply_id, c.deliverable, c.reply_to_external_id,
           c.last_inbound_at, c.route_kind, c.route_address
    into outcome, outbox_id, reply_id, deliverable, reply_to_external_id, last_inbound_at,
         route_kind, route_address
    from skillet_commit_turn(
        p_org, p_proof, p_conversation, p_channel, p_batch, p_first_received, p_body, p_used,
        p_viewed, p_names, p_triggers, p_at, p_lease, p_usage, p_claim, p_handoff_cause,
        p_handoff_reason, p_skills, p_reads) c;
    file_outbox_ids := '{}';
    if outcome = 'replied' and jsonb_typeof(p_files) = 'array'
       and jsonb_array_length(p_files) > 0 then
        with inserted as (
            insert into outbox (organization_id, conversation_id, message_id, body, part, file)
            select p_org, p_conversation, reply_id, coalesce(f.value ->> 'caption', ''),
                   f.ordinality, f.value
            from jsonb_array_elements(p_files) with ordinality as f(value, ordinality)
            returning id, part
        )
        select array_agg(id order by part) into file_outbox_ids from inserted;
    end if;
    return next;
end;
$$;
comment on function skillet_commit_turn(uuid, text, uuid, text, uuid[], timestamp with time zone,
    text, text[], text[], text[], text[], timestamp with time zone, uuid, jsonb, boolean, text,
    text, jsonb, jsonb, jsonb) is
$$The reply commit with the files the turn sends (p_files: a jsonb array, send_skill_file): the
nineteen-argument skillet_commit_turn, then, when it replied, one outbox row per file after the
text row (part 1, 2, ...; body its caption), pending and never claimed: the holder claims and
sends each after the text, in order. file_outbox_ids: those rows, in part order.$$;

-- A reply's delivery status is its text part's (part 0): one row per inbound id.
create or replace function skillet_stored_inbound(
    p_org uuid, p_channel text, p_contact text, p_external_id text
) returns table (
    conversation_id uuid, inbound_id uuid, created boolean, open boolean,
    outbox_status text, foreign_contact boolean
)
language sql stable as $$
    select m.conversation_id, m.id, false, m.answered_by is null and m.context_at is null,
           o.status, c.contact_id <> p_contact
    from messages m
    join conversations c on c.id = m.conversation_id
    left join outbox o on o.message_id = m.answered_by and o.part = 0
    where m.organization_id = p_org and m.channel = p_channel
      and m.external_id = p_external_id and m.direction = 'inbound'
$$;
