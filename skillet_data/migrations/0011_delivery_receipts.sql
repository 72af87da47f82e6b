-- What the provider says became of each message a reply went out as: the Cloud API answers
-- a send with one message id per part, then posts statuses (sent, delivered, read, failed)
-- to the webhook. Kept per message id; a status never moves back (a late `sent` after
-- `read` changes nothing), `failed` is final and keeps the provider's reason.
create table outbox_receipts (
    organization_id     uuid not null references organizations (id),
    provider_message_id text not null check (length(provider_message_id) between 1 and 256),
    outbox_id           uuid not null references outbox (id),
    status              text not null default 'accepted'
        check (status in ('accepted', 'sent', 'delivered', 'read', 'failed')),
    error               text null,
    updated_at          timestamptz not null default now(),
    primary key (organization_id, provider_message_id)
);
create index outbox_receipts_outbox_idx on outbox_receipts (outbox_id);
create index outbox_receipts_failed_idx on outbox_receipts (updated_at) where status = 'failed';

alter table outbox_receipts enable row level security;
create policy tenant_isolation on outbox_receipts
    using (skillet_is_system() or organization_id = skillet_current_org())
    with check (skillet_is_system() or organization_id = skillet_current_org());

-- Rank of a status: a receipt only ever moves to a higher one.
create function skillet_receipt_rank(status text) returns integer
language sql immutable as $$
    select case status
        when 'accepted' then 0 when 'sent' then 1 when 'delivered' then 2
        when 'read' then 3 when 'failed' then 4 end
$$;
