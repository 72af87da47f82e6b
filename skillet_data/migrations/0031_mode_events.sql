-- The events webhook follows the conversation's mode wherever the mode changes (the turn's
-- commit, a person in the API, console or CLI, the owner's phone, the idle return): triggers
-- record the event in the same transaction as the change, through skillet_record_event (a
-- no-op for an org without an events URL).
--   agent -> waiting             conversation.handoff_requested  {cause, reason}
--   -> human (or a new holder)    conversation.taken_over         {held_by, cause, from}
--   waiting/human -> agent       conversation.released           {from, held_by}
--   an inbound message while the conversation is waiting or human: message.received
--                                                                 {message_id, text, mode}

create function skillet_conversation_mode_event() returns trigger
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
begin
    if new.mode = 'waiting' and old.mode = 'agent' then
        perform public.skillet_record_event(new.organization_id, 'conversation.handoff_requested',
            new.id, jsonb_build_object('cause', new.mode_cause, 'reason', new.mode_reason));
    elsif new.mode = 'human' and (old.mode <> 'human' or new.held_by is distinct from old.held_by)
    then
        perform public.skillet_record_event(new.organization_id, 'conversation.taken_over',
            new.id, jsonb_build_object('held_by', new.held_by, 'cause', new.mode_cause,
                                       'from', old.mode));
    elsif new.mode = 'agent' and old.mode <> 'agent' then
        perform public.skillet_record_event(new.organization_id, 'conversation.released',
            new.id, jsonb_build_object('from', old.mode, 'held_by', old.held_by));
    end if;
    return null;
end;
$$;

create trigger conversations_mode_events
    after update of mode, held_by on conversations
    for each row
    when (new.mode is distinct from old.mode or new.held_by is distinct from old.held_by)
    execute function skillet_conversation_mode_event();

create function skillet_message_received_event() returns trigger
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
declare
    v_mode text;
begin
    select c.mode into v_mode from conversations c where c.id = new.conversation_id;
    if v_mode in ('waiting', 'human') then
        perform public.skillet_record_event(new.organization_id, 'message.received',
            new.conversation_id, jsonb_build_object('message_id', new.external_id,
                                                    'text', left(new.body, 200),
                                                    'mode', v_mode));
    end if;
    return null;
end;
$$;

create trigger messages_received_events
    after insert on messages
    for each row
    when (new.direction = 'inbound')
    execute function skillet_message_received_event();

revoke all on function skillet_conversation_mode_event() from public;
revoke all on function skillet_message_received_event() from public;

comment on function skillet_conversation_mode_event() is $$Trigger of conversations: records
conversation.handoff_requested, conversation.taken_over or conversation.released (through
skillet_record_event, in the changing transaction) when the mode or its holder changes.$$;
comment on function skillet_message_received_event() is $$Trigger of messages: records
message.received for an inbound message stored while its conversation is waiting or human.$$;
