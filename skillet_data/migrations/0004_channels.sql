-- WhatsApp channels: which receiving number belongs to which org, which number each inbound
-- message arrived on (so the reply leaves from it), the WhatsApp ids of one person, and the
-- outbox delivery claim that keeps a row from being sent twice.

-- One row per connected number. `address` is what the provider's webhook names the receiving
-- side by: the Cloud API phone_number_id, or the WAHA session name. A number belongs to one org.
create table channels (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    agent_id        uuid null references agents (id),
    kind            text not null check (kind in ('cloud_api', 'waha')),
    address         text not null check (address ~ '^[0-9A-Za-z._:-]{1,128}$'),
    display_phone   text null check (length(display_phone) <= 32),
    created_at      timestamptz not null default now(),
    constraint channels_kind_address_key unique (kind, address)
);
create index channels_organization_idx on channels (organization_id, created_at);

-- Written by the webhook before it enqueues: the reply to `external_id` leaves from `channel_id`.
create table inbound_routes (
    organization_id uuid not null references organizations (id),
    external_id     text not null,
    channel_id      uuid not null references channels (id) on delete cascade,
    created_at      timestamptz not null default now(),
    primary key (organization_id, external_id)
);
create index inbound_routes_channel_idx on inbound_routes (channel_id);

-- Every WhatsApp id seen for one person (a phone number, or an opaque `NNN@lid`) maps to the
-- contact_id of their conversation; the first id seen wins and later ones join it.
create table contact_aliases (
    organization_id uuid not null references organizations (id),
    alias           text not null,
    contact_id      text not null,
    created_at      timestamptz not null default now(),
    primary key (organization_id, alias)
);

-- Set just before the sender is called and never cleared by a crash: a pending row with a
-- claim may already have reached the customer, so it is not sent again.
alter table outbox add column delivery_claimed_at timestamptz null;
