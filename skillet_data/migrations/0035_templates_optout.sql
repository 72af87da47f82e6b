-- Messages the business starts, and the customer's right to stop them.
--   contact_opt_choices  every PARAR / VOLTAR a customer sent (one row per message: a job that
--                        runs twice records and confirms once); the latest row of a contact
--                        is its state. An opted-out contact gets no template and no follow-up;
--                        its own messages are still answered.
--   message_templates    a Cloud API number's WhatsApp templates, as its WABA last listed them
--                        (`skillet channels templates sync` and the daily cron).
--   followups            a template the agent scheduled (schedule_followup); the cron
--                        skillet_fire_due_followups sends each due one once, through the outbox,
--                        unless the customer wrote since, opted out, or a person holds it.
--   outbox.template      a row that leaves as a template message ({name, language, params,
--                        placeholders}),
--                        the only kind WhatsApp takes outside the 24-hour window.

create table contact_opt_choices (
    id              uuid primary key default gen_random_uuid(),
    organization_id uuid not null references organizations (id),
    contact_id      text not null,
    choice          text not null check (choice in ('out', 'in')),
    message_id      uuid not null unique references messages (id),  -- the customer's word
    confirmation_id uuid null references messages (id),
    created_at      timestamptz not null default clock_timestamp()
);
create index contact_opt_choices_contact_idx
    on contact_opt_choices (organization_id, contact_id, created_at desc);

create table message_templates (
    organization_id uuid not null references organizations (id),
    channel_id      uuid not null references channels (id) on delete cascade,
    name            text not null check (length(name) between 1 and 512 and name ~ '^[a-z0-9_]+$'),
    language        text not null check (language ~ '^[A-Za-z_]{2,16}$'),
    category        text not null check (length(category) between 1 and 64),
    status          text not null check (length(status) between 1 and 64),
    body            text not null default '' check (length(body) <= 4096),
    placeholders    text[] not null default '{}' check (cardinality(placeholders) <= 100),
    synced_at       timestamptz not null default now(),
    primary key (channel_id, name, language)
);
create index message_templates_org_idx on message_templates (organization_id, channel_id);

create table followups (
    id                uuid primary key default gen_random_uuid(),
    organization_id   uuid not null references organizations (id),
    conversation_id   uuid not null references conversations (id),
    -- The number whose synced template it names (null once that number is removed).
    channel_id        uuid null references channels (id) on delete set null,
    due_at            timestamptz not null,
    template_name     text not null check (length(template_name) between 1 and 512),
    template_language text not null check (length(template_language) between 2 and 16),
    params            jsonb not null default '[]' check (jsonb_typeof(params) = 'array'),
    placeholders      jsonb not null default '[]' check (jsonb_typeof(placeholders) = 'array'),
    body              text not null check (length(body) <= 4096),  -- as the customer reads it
    status            text not null default 'scheduled'
                          check (status in ('scheduled', 'sent', 'skipped', 'cancelled')),
    -- skipped: customer_wrote | opted_out | person_holds | template_unavailable;
    -- cancelled: who (key prefix, cli)
    status_reason     text null check (length(status_reason) <= 200),
    message_id        uuid null references messages (id),  -- the message it was sent as
    created_at        timestamptz not null default clock_timestamp(),
    decided_at        timestamptz null
);
create index followups_due_idx on followups (due_at) where status = 'scheduled';
create index followups_conversation_idx on followups (organization_id, conversation_id, created_at);

alter table outbox add column template jsonb null
    check (template is null or jsonb_typeof(template) = 'object');

do $$
declare
    t text;
begin
    foreach t in array array['contact_opt_choices', 'message_templates', 'followups'] loop
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

revoke all on contact_opt_choices, message_templates, followups from public;
grant select, insert, update (confirmation_id) on contact_opt_choices to skillet_worker;
grant select on contact_opt_choices to skillet_api;
grant select, insert, update, delete on message_templates to skillet_worker;
grant select on message_templates to skillet_api;
grant select, insert on followups to skillet_worker;
grant select, update (status, status_reason, decided_at) on followups to skillet_api;

create function skillet_contact_opted_out(p_org uuid, p_contact text)
returns boolean
language sql stable
as $$
    select coalesce((select o.choice = 'out' from contact_opt_choices o
                     where o.organization_id = p_org and o.contact_id = p_contact
                     order by o.created_at desc, o.id desc limit 1), false)
$$;
comment on function skillet_contact_opted_out(uuid, text) is
$$Whether the org's contact opted out of templates and follow-ups: its latest choice (PARAR and
the like, or VOLTAR) is 'out'. Runs as its caller, under the caller's org binding (RLS).$$;

create function skillet_fire_due_followups(p_limit integer)
returns table(organization_id uuid, conversation_id uuid, followup_id uuid, status text,
              reason text)
language sql security definer
set search_path = pg_catalog, pg_temp
as $$
    with due as (
        select f.id, f.organization_id, f.conversation_id, f.channel_id, f.created_at, f.body,
               f.template_name, f.template_language, f.params, f.placeholders
        from public.followups f
        where f.status = 'scheduled' and f.due_at <= now()
        order by f.due_at
        limit p_limit
        for update skip locked
    ), judged as (
        select d.*, c.channel,
               (select i.id from public.messages i
                where i.conversation_id = d.conversation_id and i.direction = 'inbound'
                order by coalesce(i.received_at, i.created_at) desc, i.id desc limit 1)
                   as last_inbound,
               case
                   when exists (select 1 from public.messages m
                                where m.conversation_id = d.conversation_id
                                  and m.direction = 'inbound'
                                  and coalesce(m.received_at, m.created_at) > d.created_at)
                       then 'customer_wrote'
                   when coalesce((select o.choice = 'out' from public.contact_opt_choices o
                                  where o.organization_id = d.organization_id
                                    and o.contact_id = c.contact_id
                                  order by o.created_at desc, o.id desc limit 1), false)
                       then 'opted_out'
                   when c.mode <> 'agent' then 'person_holds'
                   when not exists (select 1 from public.message_templates t
                                    where t.channel_id = d.channel_id
                                      and t.name = d.template_name
                                      and t.language = d.template_language
                                      and t.status = 'APPROVED')
                       then 'template_unavailable'
               end as reason,
               gen_random_uuid() as message_id
        from due d join public.conversations c on c.id = d.conversation_id
    ), sent_messages as (
        insert into public.messages (id, organization_id, conversation_id, direction, channel,
                                     body, kind, author, route_via_id, created_at)
        select j.message_id, j.organization_id, j.conversation_id, 'outbound', j.channel,
               j.body, 'template', 'agent', j.last_inbound, clock_timestamp()
        from judged j where j.reason is null
        returning id
    ), sent_outbox as (
        insert into public.outbox (organization_id, conversation_id, message_id, body, template)
        select j.organization_id, j.conversation_id, sm.id, j.body,
               jsonb_build_object('name', j.template_name, 'language', j.template_language,
                                  'params', j.params, 'placeholders', j.placeholders)
        from judged j join sent_messages sm on sm.id = j.message_id
    ), decided as (
        update public.followups f
        set status = case when j.reason is null then 'sent' else 'skipped' end,
            status_reason = j.reason, decided_at = now(),
            message_id = case when j.reason is null then j.message_id end
        from judged j where f.id = j.id
        returning f.id
    )
    select j.organization_id, j.conversation_id, j.id,
           case when j.reason is null then 'sent' else 'skipped' end, j.reason
    from judged j join decided d on d.id = j.id
$$;
comment on function skillet_fire_due_followups(integer) is
$$The follow-up cron (jobs.followup_tick), across orgs: at most p_limit scheduled follow-ups due
now, each decided once (locked, skip locked): skipped with reason 'customer_wrote' (a customer
message arrived after it was scheduled), 'opted_out' (the contact's latest choice is 'out') or
'person_holds' (the conversation's mode is not 'agent') or 'template_unavailable' (its number
no longer has that template approved, as last synced: Meta would refuse it); else sent: an outbound message (kind
'template', author 'agent', leaving from the number of the customer's last message) and its
outbox row carrying the template, which the caller's wakeup job hands to the channel once.
Returns (org, conversation, follow-up, 'sent' | 'skipped', reason). SECURITY DEFINER, for
skillet_worker.$$;
revoke all on function skillet_fire_due_followups(integer) from public;
grant execute on function skillet_fire_due_followups(integer) to skillet_worker;

create function skillet_template_channels(p_limit integer)
returns table(organization_id uuid, channel_id uuid, address text)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select ch.organization_id, ch.id, ch.address from public.channels ch
    where ch.kind = 'cloud_api'
    order by ch.created_at, ch.id
    limit p_limit
$$;
comment on function skillet_template_channels(integer) is
$$The Cloud API numbers whose templates the daily template sync reads (jobs.template_sync),
across orgs, ids and addresses only (each sync then runs under its org). SECURITY DEFINER, for
skillet_worker.$$;
revoke all on function skillet_template_channels(integer) from public;
grant execute on function skillet_template_channels(integer) to skillet_worker;

-- A template waiting for a needs_token channel's new token is not failed when the window
-- closes: a template is what WhatsApp takes outside it (only free-form rows are failed).
create or replace function skillet_fail_parked_outside_window(p_window_s double precision)
returns table (id uuid, organization_id uuid)
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    with parked as (
        select o.id
        from public.outbox o
        join public.messages r on r.id = o.message_id
        left join public.messages i on i.id = r.reply_to_id
        join lateral (
            select * from (
                select ch.status, 0 as preference
                from public.inbound_routes ir join public.channels ch on ch.id = ir.channel_id
                where ir.organization_id = o.organization_id and ir.external_id = i.external_id
                union all
                select ch.status, 1 from public.channels ch
                where ch.organization_id = o.organization_id
                  and (select count(*) from public.channels n
                       where n.organization_id = o.organization_id) = 1
            ) candidates order by preference limit 1
        ) route on true
        where o.status = 'pending' and o.delivery_claimed_at is null and o.template is null
          and route.status = 'needs_token'
          and (select max(m.sent_at) from public.messages m
               where m.conversation_id = o.conversation_id and m.direction = 'inbound')
              < now() - make_interval(secs => p_window_s)
    )
    update public.outbox o set
        status = 'failed',
        attempts = o.attempts + 1,
        last_error = 'outside_service_window: the channel waited for a new access token '
            || 'until the customer-service window closed; only templates may be sent now'
    from parked p
    where o.id = p.id and o.status = 'pending'
    returning o.id, o.organization_id
$$;
comment on function skillet_fail_parked_outside_window(double precision) is $$Fail as
outside_service_window the free-form replies (not templates, which WhatsApp takes outside the
window) waiting for a needs_token channel's new token whose customer last wrote more than
p_window_s ago (the outbox sweep); (id, org) of each.$$;
