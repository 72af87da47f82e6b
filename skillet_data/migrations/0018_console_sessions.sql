-- Console sign-in sessions (`skillet api` serves the console under /console).
--
-- Signing in with an API key makes a session: a random 32-byte secret in an HttpOnly cookie,
-- stored here only as its sha256 (the same reasoning as api_keys: 256 random bits need no
-- slow hash). A session speaks for the key it was made with and for nothing else: every
-- request looks the session up joined to that key, so revoking the key ends the session on
-- its next request, and the role is always the key's.

create table console_sessions (
    session_hash    bytea primary key check (length(session_hash) = 32),
    organization_id uuid not null references organizations (id),
    key_id          uuid not null references api_keys (id),
    created_at      timestamptz not null default now(),
    expires_at      timestamptz not null
);
create index console_sessions_org_idx on console_sessions (organization_id, expires_at);

alter table console_sessions enable row level security;
create policy tenant_isolation on console_sessions
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- The API's role makes a session after the key's lookup (bound to the key's org), and ends
-- its org's sessions (sign-out, expired ones); it never changes one.
revoke all on console_sessions from skillet_app;
grant select, insert, delete on console_sessions to skillet_app;

-- The one way in before an org is known: the org, role, key id and key prefix of a live
-- session (not expired) of a live key (not revoked), or no row. Owned by the migration's
-- role, search_path pinned, like skillet_api_key_lookup (0015).
create function skillet_console_session_lookup(p_hash bytea)
returns table (organization_id uuid, role text, key_id uuid, prefix text)
language sql stable security definer
set search_path = public, pg_temp
as $$
    select k.organization_id, k.role, k.id, k.prefix
    from console_sessions s
    join api_keys k on k.id = s.key_id and k.organization_id = s.organization_id
    where s.session_hash = p_hash and s.expires_at > now() and k.revoked_at is null
$$;
revoke all on function skillet_console_session_lookup(bytea) from public;
grant execute on function skillet_console_session_lookup(bytea) to skillet_app;
