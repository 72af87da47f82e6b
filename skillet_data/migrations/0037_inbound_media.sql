-- Media a customer sends (issue 26): the webhook keeps what identifies it on the message row
-- (the provider's media id or URL, the declared type, sha256, caption, a sanitized file name);
-- the worker fetches it inside the turn, stores it under media/{org}/{conversation}/{message}/
-- and, for a voice note, writes its transcript as the message's body (still kind 'audio').
--   media           the webhook's metadata (null: a message with nothing to fetch)
--   media_state     pending -> stored | transcribed | refused; deleted once retention ran
--   media_key       the S3 key of the stored bytes (null: none stored, or deleted)
--   media_attempts  transient failures so far (a turn gives up after the job's tries)
alter table messages
    add column media jsonb,
    add column media_state text
        check (media_state in ('pending', 'stored', 'transcribed', 'refused', 'deleted')),
    add column media_key text,
    add column media_type text,
    add column media_bytes bigint,
    add column media_attempts integer not null default 0,
    add column media_stored_at timestamptz,
    add column media_refusal text;

-- Whether the agent's model takes images (`skillet agents set --vision on`): a customer's
-- photo then goes to it as an image, not only as its caption.
alter table agents add column vision boolean not null default false;

-- The retention cron's scan: only rows whose bytes are still stored.
create index messages_media_stored_idx on messages (media_stored_at)
    where media_key is not null;

drop function skillet_receive_inbound(text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean);

create function skillet_receive_inbound(
    p_kind text, p_address text, p_aliases text[], p_preferred text, p_external_id text,
    p_body text, p_sent_at timestamptz, p_received_at timestamptz, p_message_kind text,
    p_always_answered boolean, p_answerable boolean, p_media jsonb
) returns table (
    organization_id uuid, channel_id uuid, contact_id text, conversation_id uuid,
    inbound_id uuid, created boolean, open boolean, outbox_status text,
    foreign_contact boolean
)
language plpgsql security definer
set search_path = public, pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
    v_channel record;
begin
    select r.id, r.organization_id, r.agent_id, r.reply_to_non_text into v_channel
    from skillet_channel_by_address(p_kind, p_address) r;
    if not found then
        return;  -- no org connected this number
    end if;
    organization_id := v_channel.organization_id;
    channel_id := v_channel.id;
    -- The sender's contact id: the one an alias of theirs already maps to (oldest mapping
    -- first), else their preferred id; every id of theirs then points at it (an alias that
    -- pointed elsewhere joins it), and the route their reply leaves by is written.
    -- (One key lookup per id, at most two: `alias = any(...)` would let a planner without
    -- statistics scan the org's aliases.)
    contact_id := coalesce(
        (select a.contact_id from unnest(p_aliases) as x(alias)
         join lateral (
             select k.contact_id, k.created_at from contact_aliases k
             where k.organization_id = v_channel.organization_id and k.alias = x.alias
         ) a on true
         order by a.created_at, x.alias limit 1),
        p_preferred);
    -- Written only when an id is new or points elsewhere: ON CONFLICT DO UPDATE locks
    -- (writes) the alias row even when its WHERE leaves it as it is.
    if exists (
        select 1 from unnest(p_aliases) as x(alias)
        where not exists (
            select 1 from contact_aliases k
            where k.organization_id = v_channel.organization_id and k.alias = x.alias
              and k.contact_id = skillet_receive_inbound.contact_id)
    ) then
        insert into contact_aliases as a (organization_id, alias, contact_id)
        select v_channel.organization_id, alias, skillet_receive_inbound.contact_id
        from unnest(p_aliases) as alias
        on conflict (organization_id, alias) do update set contact_id = excluded.contact_id
        where a.contact_id <> excluded.contact_id;
    end if;
    insert into inbound_routes (organization_id, external_id, channel_id)
    values (v_channel.organization_id, p_external_id, v_channel.id)
    on conflict (organization_id, external_id) do nothing;
    select s.conversation_id, s.inbound_id, s.created, s.open, s.outbox_status,
           s.foreign_contact
    into conversation_id, inbound_id, created, open, outbox_status, foreign_contact
    from skillet_store_inbound(
        v_channel.organization_id, '', 'whatsapp', contact_id, p_external_id, p_body, p_sent_at,
        p_received_at, p_message_kind,
        p_always_answered or (v_channel.reply_to_non_text and p_answerable),
        v_channel.agent_id) s;
    -- What the worker fetches inside the turn (never the webhook): written with the message
    -- only, so a redelivery never resets a fetch or a transcript in progress.
    if p_media is not null and created then
        update messages m set media = p_media, media_state = 'pending'
        where m.id = skillet_receive_inbound.inbound_id;
    end if;
    return next;
end;
$$;

comment on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean, jsonb
) is $$The webhook's one statement per inbound message: the channel of the receiving number
(p_kind, p_address) gives the org and the answering agent (no row: no org connected it), the
sender's ids (p_aliases, p_preferred for a person never seen) give the contact, whose aliases
and the message's reply route are recorded; then skillet_store_inbound. The message expects a
reply when p_always_answered (typed text, a voice note to transcribe), or when the channel
answers non-text messages and p_answerable. p_media (null: none): what identifies the media the
worker fetches, written on a new message only (media_state 'pending'). Returns the org,
channel, contact and skillet_store_inbound's row. SECURITY DEFINER: the caller never names an
org nor holds a proof, and learns ids and states only.$$;

alter function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean, jsonb
) set plan_cache_mode = force_generic_plan;
revoke all on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean, jsonb
) from public;
grant execute on function skillet_receive_inbound(
    text, text, text[], text, text, text, timestamptz, timestamptz, text, boolean, boolean, jsonb
) to skillet_webhook;

-- Retention (the worker's cron, across orgs): the stored media older than p_before, oldest
-- first; the cron deletes the objects, then skillet_forget_media clears their keys.
create function skillet_expired_media(p_before timestamptz, p_limit integer)
returns table (id uuid, organization_id uuid, media_key text)
language sql stable security definer
set search_path = public, pg_catalog, pg_temp
as $$
    select m.id, m.organization_id, m.media_key from messages m
    where m.media_key is not null and m.media_stored_at < p_before
    order by m.media_stored_at, m.id
    limit p_limit;
$$;

comment on function skillet_expired_media(timestamptz, integer) is
$$Messages whose media bytes were stored before p_before and are still there (at most p_limit,
oldest first): the retention cron deletes their objects, then calls skillet_forget_media.
SECURITY DEFINER: across orgs, ids and keys only.$$;

create function skillet_forget_media(p_ids uuid[])
returns integer
language sql security definer
set search_path = public, pg_catalog, pg_temp
as $$
    with forgotten as (
        update messages m set media_key = null, media_state = 'deleted'
        where m.id = any(p_ids) and m.media_key is not null
        returning 1
    )
    select count(*)::integer from forgotten;
$$;

comment on function skillet_forget_media(uuid[]) is
$$After the retention cron deleted their objects: the messages keep their body (transcript or
description), their media state becomes 'deleted' and the key is cleared. Returns how many.
SECURITY DEFINER: across orgs, by id only.$$;

revoke all on function skillet_expired_media(timestamptz, integer) from public;
grant execute on function skillet_expired_media(timestamptz, integer) to skillet_worker;
revoke all on function skillet_forget_media(uuid[]) from public;
grant execute on function skillet_forget_media(uuid[]) to skillet_worker;
