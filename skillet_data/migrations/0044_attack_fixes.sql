-- Who gave a number's own WAHA server: an operator (the CLI) vouches for it as given, private
-- or not; one an org's admin gave (the API) is resolved and checked, every address public, at
-- every call the worker makes to it (sends and media fetches), and connected to the addresses
-- checked only. Rows from before say nothing: they are checked (an operator who connected a
-- private server sets it again with `skillet channels set --waha-base-url`).
alter table channels
    add column waha_server_vouched boolean not null default false;

-- The API changes the URL and, with it, drops the vouch (it never sets it).
grant update (waha_server_vouched) on channels to skillet_api;

-- A person's reply sent with an `Idempotency-Key` header: the key (per org and actor, the
-- API key's prefix), a hash of what was asked, and the 202 answer given, committed with the
-- reply itself. The same key within 24 hours answers that answer again and sends nothing;
-- with another request it is refused. A concurrent duplicate waits on the primary key for
-- the first one's transaction, then reads its answer (or, if it rolled back, takes its place).
create table person_reply_keys (
    organization_id uuid not null references organizations (id) on delete cascade,
    actor           text not null check (length(actor) between 1 and 64),
    idempotency_key text not null check (idempotency_key ~ '^[!-~]{1,255}$'),
    request_sha256  bytea not null check (length(request_sha256) = 32),
    conversation_id uuid not null,
    message_id      uuid null,
    response        jsonb null, -- null only inside the transaction that sends the reply
    created_at      timestamptz not null default now(),
    primary key (organization_id, actor, idempotency_key)
);

alter table person_reply_keys enable row level security;
alter table person_reply_keys force row level security;
create policy tenant_isolation on person_reply_keys
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on person_reply_keys as permissive for all to skillet_system
    using (true) with check (true);

revoke all on person_reply_keys from public;
-- The API records and replays them (and forgets a key's row after 24 hours); nobody else.
grant select, insert, update, delete on person_reply_keys to skillet_api;
