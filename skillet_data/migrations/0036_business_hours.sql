-- Business hours: per org a weekly schedule (its canonical text, hours.schedule), its time
-- zone, closed days and what the agent does while closed ('answer', the default, or 'away').
-- Python decides open or closed and the next opening (hours.opening: zoneinfo); Postgres keeps
-- the settings and, per conversation, the closed period its away message was sent for, so the
-- away message is committed at most once per conversation per closed period, fenced like every
-- other reply (skillet_commit_away).

create table org_business_hours (
    organization_id uuid primary key references organizations (id),
    schedule        text null check (schedule is null or length(schedule) between 1 and 1000),
    timezone        text not null default 'America/Sao_Paulo'
                        check (length(timezone) between 1 and 64),
    closed_dates    date[] not null default '{}' check (cardinality(closed_dates) <= 200),
    after_hours     text not null default 'answer' check (after_hours in ('answer', 'away')),
    updated_at      timestamptz not null default now()
);

alter table org_business_hours enable row level security;
alter table org_business_hours force row level security;
create policy tenant_isolation on org_business_hours
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on org_business_hours as permissive for all to skillet_system
    using (true) with check (true);

revoke all on org_business_hours from public;
-- The API (and the console through it) reads and writes them; the worker reads them for its
-- turns. The CLI writes as the owner.
grant select, insert, update on org_business_hours to skillet_api;
grant select on org_business_hours to skillet_worker;

-- The closed period (named by its next opening) whose away message this conversation got.
alter table conversations add column away_period timestamptz null;

-- The away message, or the silence after it: one statement of the turn, like the reply commit.
create function skillet_commit_away(
    p_org uuid, p_proof text, p_conversation uuid, p_channel text, p_batch uuid[],
    p_first_received timestamptz, p_body text, p_at timestamptz, p_lease uuid,
    p_period timestamptz
) returns table (outcome text, outbox_id uuid, reply_id uuid, deliverable boolean,
                 reply_to_external_id text, last_inbound_at timestamptz, route_kind text,
                 route_address text)
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    v_period timestamptz;
    v_mode text;
begin
    perform set_config('skillet.organization_proof', p_proof, true);
    perform skillet_bind_org(p_org);
    select c.away_period, c.mode into v_period, v_mode
    from conversations c where c.id = p_conversation for update;
    if v_period is distinct from p_period then
        -- The period's first burst: the away message is its reply (fenced, claimed).
        select * into outcome, outbox_id, reply_id, deliverable, reply_to_external_id,
                      last_inbound_at, route_kind, route_address
        from skillet_commit_turn(p_org, p_conversation, p_channel, p_batch, p_first_received,
                                 p_body, '{}', '{}', '{}', '{}', p_at, p_lease, null, true,
                                 null, null, '[]'::jsonb);
        if outcome = 'replied' then
            update conversations set away_period = p_period where id = p_conversation;
        end if;
        return next;
        return;
    end if;
    -- Sent already this period: the burst is kept as context (history), never answered later.
    deliverable := false;
    if p_lease is not null and not exists (
        select 1 from conversations
        where id = p_conversation and lease_token = p_lease and lease_until > now()
    ) then
        outcome := 'lease_lost';
    elsif v_mode <> 'agent' then
        outcome := 'taken_over';
    else
        update messages set context_at = now()
        where id = any(p_batch) and direction = 'inbound' and answered_by is null
          and context_at is null;
        outcome := 'kept';
    end if;
    return next;
end;
$$;
revoke all on function skillet_commit_away(uuid, text, uuid, text, uuid[], timestamptz, text,
                                           timestamptz, uuid, timestamptz) from public;
grant execute on function skillet_commit_away(uuid, text, uuid, text, uuid[], timestamptz, text,
                                              timestamptz, uuid, timestamptz) to skillet_worker;

comment on function skillet_commit_away(uuid, text, uuid, text, uuid[], timestamptz, text,
                                        timestamptz, uuid, timestamptz) is $$A turn's commit
while its org is closed and chose after-hours 'away', with the org's proof. Serialized on the
conversation row. The first burst of the closed period p_period (named by its next opening)
commits p_body, the away message, as skillet_commit_turn does (same outcomes, the outbox row
claimed) and records the period on the conversation in the same statement; a later burst of
the same period is kept as context (history, never answered later): outcome 'kept', or
'lease_lost' / 'taken_over' when the fence refuses it.$$;
