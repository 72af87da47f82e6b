-- Per-conversation ordering: when each inbound message arrived (the queue's enqueue time)
-- and which reply answered it (one reply may answer a burst of messages).

alter table messages add column received_at timestamptz null;
alter table messages add column answered_by uuid null references messages (id);

update messages i set answered_by = r.id
from messages r
where r.reply_to_id = i.id and r.direction = 'outbound' and i.direction = 'inbound';

create index messages_unanswered_idx on messages (conversation_id, received_at, id)
    where direction = 'inbound' and answered_by is null;

-- The reply commit in one round trip: serialize on the conversation, refuse to overtake an
-- earlier unanswered message (the order fence), refuse a burst someone else answered,
-- otherwise write the reply, its outbox row and the 'answered' marks atomically.
create function skillet_commit_reply(
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
