-- Outbox rows leave in the order they were committed. A row that waits unclaimed (parked for
-- its number's new token, or a reply's file not yet reached) holds back every later row of its
-- conversation: the claim refuses them, and the holder, or the channel's resume, hands them
-- over in order after it. A row claimed by a send in flight does not hold the rest back: after
-- a crash its fate is unknown until the outbox sweep fails it, and the conversation goes on.

-- The pending rows of one conversation, in commit order: the claim's one probe.
create index outbox_conversation_pending_idx on outbox (conversation_id, created_at, part)
    where status = 'pending';

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
    v_created timestamptz;
    v_part smallint;
    v_reply_to uuid;
    v_via uuid;
    v_answered_external text;
begin
    select o.organization_id, o.conversation_id, o.message_id, o.status, o.delivery_claimed_at,
           o.created_at, o.part
    into v_org, v_conversation, v_message, v_status, v_claimed_at, v_created, v_part
    from outbox o where o.id = p_outbox
    for update;
    if v_org is null or v_status <> 'pending' or v_claimed_at is not null then
        return;
    end if;
    if exists (
        select 1 from outbox e
        where e.conversation_id = v_conversation and e.status = 'pending'
          and e.delivery_claimed_at is null and e.id <> p_outbox
          and (e.created_at, e.part) < (v_created, v_part)
    ) then
        return;  -- an earlier row of the conversation waits: this one goes after it
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
message it answers). No row: it is sent, failed or claimed already, or an earlier row of its
conversation waits unclaimed (parked, or a file part not yet sent): rows leave in commit order
(created_at, part). Each lookup is by primary key or one index probe: its cost does not grow
with the org's history.$$;
