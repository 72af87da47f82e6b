-- People: the business's team signs in to the console with an e-mail and a password.
--
-- A person belongs to one org; the e-mail is unique in the whole deployment (lower-cased), so
-- the sign-in finds the org from it, before any org is bound, through one narrow
-- security-definer function. The password is kept only as its argon2id hash (argon2-cffi's
-- encoded string); the API's role writes it and never reads it back: only the sign-in
-- function returns it, for the one e-mail asked.

create table people (
    id              uuid primary key,
    organization_id uuid not null references organizations (id) on delete cascade,
    name            text not null check (length(name) between 1 and 200),
    email           text not null check (length(email) between 3 and 254 and email = lower(email)),
    role            text not null check (role in ('viewer', 'editor', 'admin')),
    password_hash   text null check (password_hash is null or password_hash like '$argon2id$%'),
    active          boolean not null default true,
    created_at      timestamptz not null default now(),
    deactivated_at  timestamptz null
);
create unique index people_email_key on people (email);
create index people_org_idx on people (organization_id, created_at);

alter table people enable row level security;
alter table people force row level security;
create policy tenant_isolation on people
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on people as permissive for all to skillet_system
    using (true) with check (true);
revoke all on people from public;
grant select (id, organization_id, name, email, role, active, created_at, deactivated_at)
    on people to skillet_api;
grant insert (id, organization_id, name, email, role) on people to skillet_api;
grant update (name, role, password_hash, active, deactivated_at) on people to skillet_api;

-- An invitation: a link whose token (>= 128 random bits) is stored only as its sha256;
-- single use (used_at), valid 7 days, revoked by a newer invitation of the same person.
create table person_invitations (
    id              uuid primary key,
    organization_id uuid not null references organizations (id) on delete cascade,
    person_id       uuid not null references people (id) on delete cascade,
    token_sha256    bytea not null unique check (length(token_sha256) = 32),
    created_by      text not null check (length(created_by) between 1 and 64),
    created_at      timestamptz not null default now(),
    expires_at      timestamptz not null,
    used_at         timestamptz null,
    revoked_at      timestamptz null
);
create index person_invitations_person_idx on person_invitations (organization_id, person_id);

alter table person_invitations enable row level security;
alter table person_invitations force row level security;
create policy tenant_isolation on person_invitations
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on person_invitations as permissive for all to skillet_system
    using (true) with check (true);
revoke all on person_invitations from public;
grant select (id, organization_id, person_id, created_at, expires_at, used_at, revoked_at)
    on person_invitations to skillet_api;
grant insert on person_invitations to skillet_api;
grant update (used_at, revoked_at) on person_invitations to skillet_api;

-- Failed sign-ins per e-mail (its sha256: an unknown e-mail is not kept in clear), across the
-- deployment: no org is known yet. Only the functions below read or write it.
create table person_sign_in_failures (
    email_sha256 bytea not null check (length(email_sha256) = 32),
    failed_at    timestamptz not null default now()
);
create index person_sign_in_failures_idx on person_sign_in_failures (email_sha256, failed_at);
alter table person_sign_in_failures enable row level security;
alter table person_sign_in_failures force row level security;
create policy system_access on person_sign_in_failures as permissive for all to skillet_system
    using (true) with check (true);
revoke all on person_sign_in_failures from public;

-- A console session speaks for an API key or for a person, never both.
alter table console_sessions alter column key_id drop not null;
alter table console_sessions
    add column person_id uuid null references people (id) on delete cascade;
alter table console_sessions
    add constraint console_sessions_one_speaker check ((key_id is null) <> (person_id is null));
create index console_sessions_person_idx on console_sessions (person_id) where person_id is not null;

create function skillet_person_sign_in_lookup(p_email text)
returns table (person_id uuid, organization_id uuid, role text, password_hash text,
               failures integer)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select p.id, p.organization_id, p.role, p.password_hash,
           (select count(*)::integer from public.person_sign_in_failures f
            where f.email_sha256 = sha256(convert_to(lower(p_email), 'UTF8'))
              and f.failed_at > now() - interval '1 hour')
    from (select 1) as one
    left join public.people p on p.email = lower(p_email) and p.active
$$;
comment on function skillet_person_sign_in_lookup(text) is
$$The one way in for an e-mail and password before an org is known: the active person's id, org,
role and password hash (null: none set yet), and the e-mail's failed sign-ins in the last hour;
always one row (person columns null for an unknown or inactive e-mail, failures still counted).
SECURITY DEFINER with search_path pinned, like skillet_api_key_lookup.$$;
revoke all on function skillet_person_sign_in_lookup(text) from public;
grant execute on function skillet_person_sign_in_lookup(text) to skillet_api;

create function skillet_person_sign_in_failed(p_email text)
returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    delete from public.person_sign_in_failures
    where email_sha256 = sha256(convert_to(lower(p_email), 'UTF8'))
      and failed_at <= now() - interval '1 hour';
    insert into public.person_sign_in_failures (email_sha256)
    values (sha256(convert_to(lower(p_email), 'UTF8')));
$$;
comment on function skillet_person_sign_in_failed(text) is
$$Counts one failed sign-in against an e-mail (known or not; kept as its sha256) and forgets its
failures older than an hour.$$;
revoke all on function skillet_person_sign_in_failed(text) from public;
grant execute on function skillet_person_sign_in_failed(text) to skillet_api;

create function skillet_invitation_lookup(p_hash bytea)
returns table (invitation_id uuid, organization_id uuid, person_id uuid, name text,
               email text, token_sha256 bytea)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select i.id, i.organization_id, i.person_id, p.name, p.email, i.token_sha256
    from public.person_invitations i
    join public.people p on p.id = i.person_id and p.organization_id = i.organization_id
    where i.token_sha256 = p_hash and i.used_at is null and i.revoked_at is null
      and i.expires_at > now()
$$;
comment on function skillet_invitation_lookup(bytea) is
$$The one way in for an invitation's link before an org is known: an unused, unrevoked, unexpired
invitation's id, org, person, their name and e-mail, for the token's sha256; or no row.$$;
revoke all on function skillet_invitation_lookup(bytea) from public;
grant execute on function skillet_invitation_lookup(bytea) to skillet_api;

drop function skillet_console_session_lookup(bytea);
create function skillet_console_session_lookup(p_hash bytea)
returns table (organization_id uuid, role text, key_id uuid, prefix text, person_id uuid,
               person_name text)
language sql stable security definer
set search_path = public, pg_temp
as $$
    select k.organization_id, k.role, k.id, k.prefix, null::uuid, null::text
    from console_sessions s
    join api_keys k on k.id = s.key_id and k.organization_id = s.organization_id
    where s.session_hash = p_hash and s.expires_at > now() and k.revoked_at is null
    union all
    select p.organization_id, p.role, p.id, 'person:' || p.id::text, p.id, p.name
    from console_sessions s
    join people p on p.id = s.person_id and p.organization_id = s.organization_id
    where s.session_hash = p_hash and s.expires_at > now() and p.active
$$;
comment on function skillet_console_session_lookup(bytea) is
$$The one way in for a console session: the org, role, key id and key prefix of a live session
(not expired) of a live key (not revoked); or, for a person's session, the org, role, the
person's id (twice), `person:<id>` and their name while the person is active; or no row. SECURITY DEFINER
with search_path pinned, like skillet_api_key_lookup.$$;
revoke all on function skillet_console_session_lookup(bytea) from public;
grant execute on function skillet_console_session_lookup(bytea) to skillet_api;
grant execute on function skillet_console_session_lookup(bytea) to skillet_app;

-- A deactivated person's conversations go back to waiting (conversation.mode: holder_gone).
create or replace function skillet_change_mode(
    p_conversation uuid, p_transition text, p_held_by text default null,
    p_cause text default null, p_reason text default null, p_replied boolean default false,
    p_keep_pending boolean default true)
returns text
language plpgsql
as $$
#variable_conflict use_column
declare
    v_mode text;
    v_held text;
begin
    select c.mode, c.held_by into v_mode, v_held
    from public.conversations c where c.id = p_conversation for update;
    if not found then
        return null;
    end if;
    if p_transition = 'handoff' and v_mode = 'agent' then
        update public.conversations set mode = 'waiting', held_by = null, mode_since = now(),
            mode_reason = left(p_reason, 500), mode_cause = p_cause, handoff_at = now(),
            person_replied_at = null, wait_notice_at = null
        where id = p_conversation;
        return 'waiting';
    elsif p_transition = 'take' then
        -- mode_since kept when the same person already held it; from the agent it counts as a
        -- handoff with the taker's cause.
        update public.conversations set
            mode_since = case when mode = 'human' and held_by = p_held_by then mode_since
                              else now() end,
            mode_cause = case when mode = 'agent' then p_cause else mode_cause end,
            mode_reason = case when mode = 'agent' then p_reason else mode_reason end,
            handoff_at = coalesce(handoff_at, now()),
            person_replied_at = case when p_replied then now() else person_replied_at end,
            mode = 'human', held_by = p_held_by,
            -- The agent's holder loses its lease: a reply it is still thinking about is refused
            -- at its commit (lease_lost) even if the conversation is back with the agent by then.
            lease_token = null, lease_until = null
        where id = p_conversation;
        return 'human';
    elsif p_transition = 'phone_reply' then
        -- A person who holds it from the console keeps it; otherwise the phone holds it.
        update public.conversations set
            mode_since = case when mode = 'human' then mode_since else now() end,
            mode_cause = case when mode = 'agent' then 'phone' else mode_cause end,
            mode_reason = case when mode = 'agent' then 'respondida pelo celular da empresa'
                               else mode_reason end,
            held_by = case when mode = 'human' then held_by else 'phone' end,
            handoff_at = coalesce(handoff_at, now()),
            person_replied_at = now(),
            mode = 'human', lease_token = null, lease_until = null
        where id = p_conversation;
        return 'human';
    elsif p_transition = 'release' or (p_transition = 'idle_return' and v_mode = 'human') then
        update public.conversations set mode = 'agent', held_by = null, mode_since = now(),
            mode_reason = case when p_transition = 'idle_return' then 'idle'
                               else coalesce(p_reason, 'devolvida ao agente') end,
            mode_cause = null, handoff_at = null, person_replied_at = null,
            wait_notice_at = null
        where id = p_conversation;
        if p_keep_pending or p_transition = 'idle_return' then
            -- What no person answered stays as context for the agent, never a later reply.
            update public.messages set context_at = now()
            where conversation_id = p_conversation and direction = 'inbound'
              and answered_by is null and context_at is null;
        end if;
        return 'agent';
    elsif p_transition = 'holder_gone' and v_mode = 'human' then
        -- The person who held it can no longer (deactivated): back to waiting for another.
        update public.conversations set mode = 'waiting', held_by = null, mode_since = now(),
            mode_reason = left(coalesce(p_reason, 'a pessoa que atendia foi desativada'), 500),
            wait_notice_at = null
        where id = p_conversation;
        return 'waiting';
    elsif p_transition = 'wait_notice' and v_mode = 'waiting' then
        update public.conversations c set wait_notice_at = now()
        where c.id = p_conversation and c.wait_notice_at is null;
        return 'waiting';
    end if;
    return null;  -- a transition that does not apply to the current mode: nothing changed
end;
$$;

comment on function skillet_change_mode(uuid, text, text, text, text, boolean, boolean) is
$$Every change of a conversation's mode, under its row lock; returns the mode after, or null when
p_transition does not apply to the current mode (nothing changed). Transitions (conversation.mode
is the readable twin, held equal by a test): 'handoff' agent -> waiting (p_cause, p_reason: the
turn's commit); 'take' any -> human held by p_held_by (p_cause, p_reason when it came from the
agent; p_replied: a person's reply); 'phone_reply' any -> human (the owner's phone: a person
holding it keeps it, else 'phone'); both end the agent holder's lease, so a reply it was still
thinking about is refused at its commit (lease_lost), even after a release; 'release' any -> agent (p_keep_pending: the unanswered
customer messages are kept as context, never answered later); 'idle_return' human -> agent (they
are always kept); 'holder_gone' human -> waiting (a deactivated person's
conversations wait for another; the caller picks them by held_by under their row lock); 'wait_notice' waiting -> waiting (the "still calling someone" notice is sent,
or skipped, once). The events trigger (skillet_conversation_mode_event) reports each change.$$;

