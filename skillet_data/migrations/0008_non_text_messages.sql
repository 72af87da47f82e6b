-- Messages that are not text (image, audio, location, ...) are stored like any other, in
-- their conversation's order, but only start a turn when their channel says so. One that
-- expects no reply is context for the next turn and never holds back a later reply.

alter table messages add column kind text not null default 'text'
    check (kind ~ '^[a-z_]{1,32}$');
alter table messages add column expects_reply boolean not null default true;

-- Per number: answer non-text messages (e.g. "I can't listen to audio, can you type?").
alter table channels add column reply_to_non_text boolean not null default false;

drop index messages_unanswered_idx;
create index messages_unanswered_idx on messages (conversation_id, received_at, id)
    where direction = 'inbound' and answered_by is null and expects_reply;

-- As in 0005, but the order fence only waits for messages that expect a reply.
create or replace function skillet_commit_reply(
    p_org uuid, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text
) returns table (outcome text, outbox_id uuid, reply_id uuid)
language plpgsql as $$
declare
    v_reply uuid;
    v_outbox uuid;
begin
    perform 1 from conversations where id = p_conversation for update;
    if exists (
        select 1 from messages
        where conversation_id = p_conversation and direction = 'inbound' and answered_by is null
          and expects_reply
          and coalesce(received_at, created_at) <= p_first_received and not (id = any(p_batch))
    ) then
        return query select 'overtaken'::text, null::uuid, null::uuid;
        return;
    end if;
    if (select count(*) from messages
        where id = any(p_batch) and direction = 'inbound' and answered_by is null)
       <> cardinality(p_batch) then
        return query select 'answered'::text, null::uuid, null::uuid;
        return;
    end if;
    insert into messages (organization_id, conversation_id, direction, channel, body, reply_to_id)
    values (p_org, p_conversation, 'outbound', p_channel, p_body, p_batch[cardinality(p_batch)])
    returning id into v_reply;
    update messages set answered_by = v_reply where id = any(p_batch);
    insert into outbox (organization_id, conversation_id, message_id, body)
    values (p_org, p_conversation, v_reply, p_body)
    returning id into v_outbox;
    return query select 'replied'::text, v_outbox, v_reply;
end;
$$;
