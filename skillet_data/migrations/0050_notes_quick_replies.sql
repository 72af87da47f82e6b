-- The team's own words around a conversation, never the customer's nor the agent's.
--
-- conversation_notes: what a person writes for the team in a conversation's thread (an
-- internal note). Never sent, never in the model's prompt: the turn reads messages only,
-- and no function of the worker or the webhook reads this table.
-- quick_replies: the org's saved answers (respostas rápidas) a person picks with "/" in the
-- reply box; at most 200 per org, counted under a per-org advisory lock by the API.

create table conversation_notes (
    id              uuid primary key,
    organization_id uuid not null references organizations (id) on delete cascade,
    conversation_id uuid not null references conversations (id) on delete cascade,
    author          text not null check (length(author) between 1 and 64),
    text            text not null check (length(text) between 1 and 4096),
    created_at      timestamptz not null default now()
);
create index conversation_notes_thread_idx
    on conversation_notes (organization_id, conversation_id, created_at, id);

alter table conversation_notes enable row level security;
alter table conversation_notes force row level security;
create policy tenant_isolation on conversation_notes
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on conversation_notes as permissive for all to skillet_system
    using (true) with check (true);
revoke all on conversation_notes from public;
grant select, insert on conversation_notes to skillet_api;

create table quick_replies (
    id              uuid primary key,
    organization_id uuid not null references organizations (id) on delete cascade,
    title           text not null check (length(title) between 1 and 40),
    text            text not null check (length(text) between 1 and 4096),
    created_by      text not null check (length(created_by) between 1 and 64),
    created_at      timestamptz not null default now(),
    updated_at      timestamptz not null default now()
);
create unique index quick_replies_title_key on quick_replies (organization_id, lower(title));

alter table quick_replies enable row level security;
alter table quick_replies force row level security;
create policy tenant_isolation on quick_replies
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on quick_replies as permissive for all to skillet_system
    using (true) with check (true);
revoke all on quick_replies from public;
grant select, insert, delete on quick_replies to skillet_api;
grant update (title, text, updated_at) on quick_replies to skillet_api;
