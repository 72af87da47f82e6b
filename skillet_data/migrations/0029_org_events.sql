-- Telling the business: per org an events webhook (a URL and the secret its bodies are signed
-- with), and an outbox of the events to send it (conversation.handoff_requested, .taken_over,
-- .released, message.received). An event is recorded by skillet_record_event in the same
-- transaction as the change that causes it, so it exists exactly when the change committed;
-- the worker's delivery cron sends it later (events/delivery.py), at least once, never inside
-- a turn, claiming rows set-wise through skillet_claim_events and settling them through
-- skillet_settle_events (both SECURITY DEFINER, the worker's only).

create table org_event_settings (
    organization_id uuid primary key references organizations (id),
    url             text null check (url is null or length(url) between 1 and 2048),
    -- The HMAC key of X-Skillet-Signature. Only the delivery function reads it: the API's
    -- role may write it and see `secret_set`, never the value.
    secret          text null check (secret is null or length(secret) between 16 and 512),
    secret_set      boolean generated always as (secret is not null) stored,
    updated_at      timestamptz not null default now(),
    check (url is null or secret is not null)  -- a URL without a key would be sent unsigned
);

create table org_events (
    id              uuid primary key,
    organization_id uuid not null references organizations (id),
    type            text not null check (type in ('conversation.handoff_requested',
                        'conversation.taken_over', 'conversation.released',
                        'message.received')),
    conversation_id uuid not null references conversations (id),
    payload         jsonb not null,  -- the body sent, as recorded (id, type, org, ..., data)
    status          text not null default 'pending'
                        check (status in ('pending', 'delivered', 'failed')),
    attempts        integer not null default 0,
    -- When it may next be claimed: a claim moves it past the claim's lease, so an event
    -- whose worker died is claimed again once the lease is over (at least once).
    next_attempt_at timestamptz not null default now(),
    claim_id        uuid null,  -- the claim that may settle it (a late one settles nothing)
    last_error      text null,
    created_at      timestamptz not null default now(),
    delivered_at    timestamptz null
);
create index org_events_due_idx on org_events (next_attempt_at) where status = 'pending';
create index org_events_org_idx on org_events (organization_id, created_at, id);

do $$
declare
    t text;
begin
    foreach t in array array['org_event_settings', 'org_events'] loop
        execute format('alter table %I enable row level security', t);
        execute format('alter table %I force row level security', t);
        execute format(
            'create policy tenant_isolation on %I
                 using (organization_id = (select skillet_current_org()))
                 with check (organization_id = (select skillet_current_org()))', t);
        execute format(
            'create policy system_access on %I as permissive for all to skillet_system
                 using (true) with check (true)', t);
    end loop;
end
$$;

revoke all on org_event_settings, org_events from public;
-- The API sets the URL and the secret and reads back whether one is set; the worker and the
-- API record events (skillet_record_event runs as its caller) and may list them.
grant select (organization_id, url, secret_set, updated_at) on org_event_settings
    to skillet_api;
grant insert (organization_id, url, secret, updated_at),
      update (url, secret, updated_at) on org_event_settings to skillet_api;
grant select (organization_id, url) on org_event_settings to skillet_worker;
grant select, insert on org_events to skillet_worker, skillet_api;

-- Record one event of the bound org's conversation, in the caller's transaction; the event's
-- id, or null when the org has no events URL (nothing is recorded then).
create function skillet_record_event(
    p_org uuid, p_type text, p_conversation uuid, p_data jsonb)
returns uuid
language plpgsql volatile  -- as its caller, like the turn's statements (row-level security)
as $$
declare
    v_id uuid;
    v_contact text;
begin
    perform public.skillet_bind_org(p_org);
    if p_type is null or p_type not in ('conversation.handoff_requested',
            'conversation.taken_over', 'conversation.released', 'message.received') then
        raise exception 'event_type_unknown: %', p_type using errcode = '22023';
    end if;
    if p_data is not null and (jsonb_typeof(p_data) <> 'object'
                               or pg_column_size(p_data) > 8192) then
        raise exception 'event_data_invalid: a JSON object of at most 8 KiB'
            using errcode = '22023';
    end if;
    if not exists (select 1 from public.org_event_settings s
                   where s.organization_id = p_org and s.url is not null) then
        return null;
    end if;
    select c.contact_id into v_contact from public.conversations c
    where c.id = p_conversation and c.organization_id = p_org;
    if not found then
        raise exception 'conversation_not_found: %', p_conversation using errcode = 'P0002';
    end if;
    v_id := gen_random_uuid();
    insert into public.org_events (id, organization_id, type, conversation_id, payload)
    values (v_id, p_org, p_type, p_conversation, jsonb_build_object(
        'id', v_id,
        'type', p_type,
        'organization_id', p_org,
        'conversation_id', p_conversation,
        'contact_id', v_contact,
        'occurred_at', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'data', coalesce(p_data, '{}'::jsonb)));
    return v_id;
end;
$$;

-- The same with the org's proof as its 2nd argument, for a connection bound to no org (a
-- self-bound one, like the turn's statements): sets the proof for the transaction.
create function skillet_record_event(
    p_org uuid, p_proof text, p_type text, p_conversation uuid, p_data jsonb)
returns uuid
language plpgsql volatile
as $$
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    return public.skillet_record_event(p_org, p_type, p_conversation, p_data);
end;
$$;
revoke all on function skillet_record_event(uuid, text, uuid, jsonb) from public;
revoke all on function skillet_record_event(uuid, text, text, uuid, jsonb) from public;
grant execute on function skillet_record_event(uuid, text, uuid, jsonb)
    to skillet_worker, skillet_api;
grant execute on function skillet_record_event(uuid, text, text, uuid, jsonb)
    to skillet_worker, skillet_api;

-- Up to p_limit due events of every org, oldest due first, each claimed for p_lease_s
-- seconds (skip locked: two workers never claim one event at once), with its org's URL and
-- secret (a null URL: the org cleared it since). The claim's id settles them.
create function skillet_claim_events(p_limit integer, p_lease_s double precision)
returns table (id uuid, organization_id uuid, type text, payload jsonb, attempts integer,
               created_at timestamptz, url text, secret text, claim_id uuid)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_claim uuid := gen_random_uuid();
begin
    return query
    with due as (
        select e.id from public.org_events e
        where e.status = 'pending' and e.next_attempt_at <= now()
        order by e.next_attempt_at, e.id
        limit p_limit
        for update skip locked
    ), claimed as (
        update public.org_events e set
            attempts = e.attempts + 1,
            next_attempt_at = now() + make_interval(secs => p_lease_s),
            claim_id = v_claim
        from due where e.id = due.id
        returning e.id, e.organization_id, e.type, e.payload, e.attempts, e.created_at
    )
    select c.id, c.organization_id, c.type, c.payload, c.attempts, c.created_at, s.url,
           s.secret, v_claim
    from claimed c
    left join public.org_event_settings s on s.organization_id = c.organization_id
    order by c.created_at, c.id;
end;
$$;
revoke all on function skillet_claim_events(integer, double precision) from public;
grant execute on function skillet_claim_events(integer, double precision) to skillet_worker;

-- What became of the events of claim p_claim: 'delivered', 'retry' (due again in
-- p_retry_in_s seconds) or 'failed' (kept, with its error). An event whose claim is no longer
-- p_claim (its lease ended and another claim took it) is left alone. How many were settled.
create function skillet_settle_events(
    p_claim uuid, p_ids uuid[], p_outcomes text[], p_retry_in_s double precision[],
    p_errors text[])
returns bigint
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_settled bigint;
begin
    if exists (select 1 from unnest(p_outcomes) o
               where o is null or o not in ('delivered', 'retry', 'failed')) then
        raise exception 'event_outcome_unknown' using errcode = '22023';
    end if;
    with settled as (
        update public.org_events e set
            status = case s.outcome when 'retry' then 'pending' else s.outcome end,
            delivered_at = case when s.outcome = 'delivered' then now() end,
            next_attempt_at = case when s.outcome = 'retry'
                                   then now() + make_interval(secs => greatest(s.retry_in_s, 0))
                                   else e.next_attempt_at end,
            last_error = case when s.outcome = 'delivered' then e.last_error
                              else left(s.error, 500) end,
            claim_id = null
        from unnest(p_ids, p_outcomes, p_retry_in_s, p_errors) as s(id, outcome, retry_in_s, error)
        where e.id = s.id and e.claim_id = p_claim and e.status = 'pending'
        returning 1
    )
    select count(*) into v_settled from settled;
    return v_settled;
end;
$$;
revoke all on function skillet_settle_events(uuid, uuid[], text[], double precision[], text[])
    from public;
grant execute on function skillet_settle_events(uuid, uuid[], text[], double precision[], text[])
    to skillet_worker;

comment on function skillet_record_event(uuid, text, uuid, jsonb) is $$Record an events-webhook
event (conversation.handoff_requested, .taken_over, .released, message.received) of p_org's
conversation in the caller's transaction; binds p_org (refused without its proof). The
event's id, or null when the org has no events URL.$$;
comment on function skillet_record_event(uuid, text, text, uuid, jsonb) is $$Record an event
with the org's proof as 2nd argument (a connection bound to no org): sets the proof for the
transaction and records as skillet_record_event(uuid, text, uuid, jsonb) does.$$;
comment on function skillet_claim_events(integer, double precision) is $$The events delivery:
claim up to p_limit due events of every org for p_lease_s seconds (for update skip locked),
each with its org's events URL and secret, and the claim's id that settles them.$$;
comment on function skillet_settle_events(uuid, uuid[], text[], double precision[], text[]) is $$The
events delivery: mark the events of claim p_claim delivered, due again after a backoff
(retry) or failed (kept, with the error); events claimed since by another claim are left.$$;
