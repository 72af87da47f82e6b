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
