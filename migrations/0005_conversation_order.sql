-- Per-conversation ordering: when each inbound message arrived (the queue's enqueue time)
-- and which reply answered it (one reply may answer a burst of messages).

alter table messages add column received_at timestamptz null;
alter table messages add column answered_by uuid null references messages (id);

update messages i set answered_by = r.id
from messages r
where r.reply_to_id = i.id and r.direction = 'outbound' and i.direction = 'inbound';

create index messages_unanswered_idx on messages (conversation_id, received_at, id)
    where direction = 'inbound' and answered_by is null;
