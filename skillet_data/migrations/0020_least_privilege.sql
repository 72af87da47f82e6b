-- Least privilege. Until now the apps reached every org by one of two tricks: a session could
-- set `skillet.system` itself, or RESET ROLE back to a login user that owned the tables (to
-- which row-level security did not apply). From here on:
--   * `skillet migrate` runs as the schema owner; the apps log in as users that own nothing
--     and are members of one group role each: skillet_worker, skillet_webhook, skillet_api,
--     each granted only what that process uses (login users: worker/migrate.py).
--   * Row-level security is FORCEd, so it applies to the owner too.
--   * "System" is no longer a setting but a role: members of skillet_system (the owner, to
--     whom this migration grants it) see every org. No group role is ever a member, so
--     system-wide work goes through the narrow SECURITY DEFINER functions below, each doing
--     one thing, executable only by the group that needs it.
-- skillet_app (0006) keeps its grants for one release, for workers of the previous release
-- during a rolling deploy; nothing of this release uses it, and tables made from now on are
-- no longer granted to it by default (0006's default privileges end here).

do $$
declare
    role_name text;
begin
    foreach role_name in array array['skillet_system', 'skillet_worker', 'skillet_webhook',
                                     'skillet_api']
    loop
        if not exists (select 1 from pg_roles where rolname = role_name) then
            begin
                execute format('create role %I nologin', role_name);
            exception when duplicate_object or unique_violation then
                null;  -- roles are per cluster: a migration of another database made it first
            end;
        end if;
    end loop;
end
$$;
-- The owner sees every org and may SET ROLE to each group (a non-superuser owner needs the
-- membership for that; a development setup logs in as the owner and switches).
grant skillet_system, skillet_worker, skillet_webhook, skillet_api to current_user;

-- Policies: the tenant's rows for everyone, and every row for skillet_system through a
-- policy of its own (`to skillet_system`: Postgres decides per statement whether it applies,
-- so a tenant's query pays nothing for it, where `skillet_is_system() or ...` ran per row).
do $$
declare
    t record;
begin
    for t in
        select c.relname,
               exists (select 1 from pg_attribute a where a.attrelid = c.oid
                       and a.attname = 'organization_id' and not a.attisdropped) as has_org,
               exists (select 1 from pg_policies p where p.schemaname = 'public'
                       and p.tablename = c.relname and p.policyname = 'tenant_isolation')
                   as has_tenant_policy
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public' and c.relkind in ('r', 'p') and c.relrowsecurity
    loop
        if t.has_tenant_policy and t.has_org then
            execute format(
                'alter policy tenant_isolation on %I
                     using (organization_id = skillet_current_org())
                     with check (organization_id = skillet_current_org())', t.relname);
        end if;
        execute format(
            'create policy system_access on %I as permissive for all to skillet_system
                 using (true) with check (true)', t.relname);
        execute format('alter table %I force row level security', t.relname);
    end loop;
end
$$;
-- An org reads its own row; only the owner creates organizations (org_settings of 0015 lets
-- an org change its own settings).
alter policy tenant_isolation on organizations
    using (id = skillet_current_org()) with check (false);
drop policy system_only on dead_letters;  -- system_access now; org_read/org_requeue of 0015

-- Kept for anything that still calls it: now a role, not a setting.
create or replace function skillet_is_system() returns boolean
language sql stable as $$
    select pg_has_role(current_user, 'skillet_system', 'USAGE')
$$;

alter default privileges in schema public
    revoke select, insert, update, delete on tables from skillet_app;
alter default privileges in schema public revoke usage, select on sequences from skillet_app;
revoke create on schema public from public;
grant usage on schema public to skillet_worker, skillet_webhook, skillet_api;
grant usage, select on all sequences in schema public to skillet_worker, skillet_webhook,
    skillet_api;

-- The worker: turns (read the org's agent, skills, conversation; write the reply, its outbox
-- row and the durable counts through skillet_commit_reply), the agent's own skills and drafts.
grant select on organizations, agents, channels, inbound_routes, contact_aliases,
    skill_pointers, skill_versions, skill_usage, skill_drafts, skill_catalog_revisions,
    conversations, messages, outbox, outbox_receipts, skill_activation_daily, token_usage_daily
    to skillet_worker;
grant insert, update on conversations, messages, outbox, outbox_receipts, skill_usage,
    skill_pointers, skill_drafts, skill_catalog_revisions, skill_activation_daily,
    token_usage_daily to skillet_worker;
grant insert on skill_versions, audit_log to skillet_worker;

-- The webhook: route an event to its channel (by function), store the message and its
-- conversation, record who sent it, move the receipts of the org's replies.
grant select on agents, channels, inbound_routes, contact_aliases, conversations, messages,
    outbox, outbox_receipts to skillet_webhook;
grant insert, update on inbound_routes, contact_aliases, conversations, messages,
    outbox_receipts to skillet_webhook;

-- The admin API and console: an org's own everything, but keys, sessions and settings only
-- as 0015/0018 allow, and never the WAHA keys or the migrations' bookkeeping.
grant select on organizations, agents, channels, inbound_routes, contact_aliases,
    skill_pointers, skill_versions, skill_usage, skill_drafts, skill_catalog_revisions,
    skill_activations, skill_activation_daily, token_usage_daily, conversations, messages,
    outbox, outbox_receipts, curator_runs, audit_log, dead_letters, console_sessions
    to skillet_api;
grant insert, update, delete on agents, skill_pointers, skill_drafts, skill_usage to skillet_api;
grant insert, update on skill_catalog_revisions, conversations, messages to skillet_api;
grant insert on skill_versions, audit_log, inbound_routes, contact_aliases, console_sessions
    to skillet_api;
grant insert, update (agent_id, reply_to_non_text) on channels to skillet_api;
grant delete on console_sessions to skillet_api;
grant update (requeued_at) on dead_letters to skillet_api;
grant update (agent_authoring) on organizations to skillet_api;
grant select (id, organization_id, prefix, role, name, created_at, revoked_at, last_used_at)
    on api_keys to skillet_api;
grant insert (id, organization_id, prefix, key_hash, role, name) on api_keys to skillet_api;
grant update (revoked_at) on api_keys to skillet_api;

-- The API's ways in before an org is known (0015, 0018) and the webhook's (0013).
grant execute on function skillet_api_key_lookup(text, bytea) to skillet_api;
grant execute on function skillet_console_session_lookup(bytea) to skillet_api;
grant execute on function skillet_waha_channel_key(text) to skillet_webhook;

-- The channel a webhook event's receiving number belongs to, or no row.
create function skillet_channel_by_address(p_kind text, p_address text)
returns table (id uuid, organization_id uuid, agent_id uuid, kind text, address text,
               display_phone text, created_at timestamptz, reply_to_non_text boolean)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select c.id, c.organization_id, c.agent_id, c.kind, c.address, c.display_phone,
           c.created_at, c.reply_to_non_text
    from public.channels c
    where c.kind = p_kind and c.address = p_address
$$;
revoke all on function skillet_channel_by_address(text, text) from public;
grant execute on function skillet_channel_by_address(text, text) to skillet_webhook;

-- The conversation sweep: conversations with an unanswered message older than the window and
-- no live lease (ids only; the woken job reads them under its org).
create function skillet_conversations_waiting(p_after_s double precision, p_limit integer)
returns table (organization_id uuid, conversation_id uuid)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select distinct m.organization_id, m.conversation_id
    from public.messages m
    join public.conversations c on c.id = m.conversation_id
    where m.direction = 'inbound' and m.answered_by is null and m.expects_reply
      and m.received_at < now() - make_interval(secs => p_after_s)
      and (c.lease_until is null or c.lease_until < now())
    limit p_limit
$$;
revoke all on function skillet_conversations_waiting(double precision, integer) from public;
grant execute on function skillet_conversations_waiting(double precision, integer)
    to skillet_worker;

-- The outbox sweep: a claim older than any send can last was interrupted (its job cancelled,
-- its worker dead): the reply may or may not have arrived, so it is failed, not re-sent.
create function skillet_fail_abandoned_claims(p_after_s double precision)
returns table (id uuid, organization_id uuid)
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    update public.outbox o set
        status = 'failed',
        attempts = o.attempts + 1,
        last_error = 'delivery_unknown: the send was interrupted after its claim at '
            || to_char(o.delivery_claimed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            || ' (worker stopped or job timed out); not re-sent'
    where o.status = 'pending'
      and o.delivery_claimed_at < now() - make_interval(secs => p_after_s)
    returning o.id, o.organization_id
$$;
revoke all on function skillet_fail_abandoned_claims(double precision) from public;
grant execute on function skillet_fail_abandoned_claims(double precision) to skillet_worker;

-- What a job could not do. `p_org` only from a payload that validated (that org may then list
-- and requeue the row); null leaves it to operators.
create function skillet_record_dead_letter(
    p_job_id text, p_function text, p_payload jsonb, p_error_code text, p_error text,
    p_tries integer, p_org uuid)
returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    insert into public.dead_letters (job_id, function, payload, error_code, error, tries,
                                     organization_id)
    values (p_job_id, p_function, p_payload, p_error_code, left(p_error, 2000), p_tries, p_org)
$$;
revoke all on function skillet_record_dead_letter(text, text, jsonb, text, text, integer, uuid)
    from public;
grant execute on function skillet_record_dead_letter(text, text, jsonb, text, text, integer, uuid)
    to skillet_worker;

-- Activation telemetry: one batch spans orgs (rows only ever added, never read back here).
create function skillet_record_activations(
    p_orgs uuid[], p_names text[], p_versions uuid[], p_triggers text[], p_job_ids text[])
returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    insert into public.skill_activations (organization_id, skill_name, skill_version_id,
                                          trigger, job_id)
    select * from unnest(p_orgs, p_names, p_versions, p_triggers, p_job_ids)
$$;
revoke all on function skillet_record_activations(uuid[], text[], uuid[], text[], text[])
    from public;
grant execute on function skillet_record_activations(uuid[], text[], uuid[], text[], text[])
    to skillet_worker;

-- The curator's schedule: orgs with at least one installed skill, their last scheduled run
-- and their newest inbound message (both index probes per org).
create function skillet_curator_schedule()
returns table (organization_id uuid, last_run_at timestamptz, last_activity_at timestamptz)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select o.id,
           (select max(r.ran_at) from public.curator_runs r
            where r.organization_id = o.id and not r.replayed),
           (select max(m.created_at) from public.messages m
            where m.organization_id = o.id and m.direction = 'inbound')
    from public.organizations o
    where exists (select 1 from public.skill_pointers p where p.organization_id = o.id)
    order by o.id
$$;
revoke all on function skillet_curator_schedule() from public;
grant execute on function skillet_curator_schedule() to skillet_worker;

-- One curator pass over a chunk of orgs (skills/curator_run.py takes their locks first, in the
-- same transaction). Every installed skill gets an outcome: a skip reason from the gates
-- (provenance is the installed version's created_by, then the pin), else the state
-- curator_next_state gives; absent usage row: active, unpinned, never active. With p_write the
-- transitions are written with a compare-and-set against what was read (so `moved` falls
-- short of `planned` when a turn or an operator changed a row since: the caller rolls back
-- and redoes the chunk), revisions are bumped once per org (the row trigger of 0003 stands
-- aside) and the reports are stored; without it nothing is written (a dry run). Reports: one
-- row per requested org, lists sorted by name in code-point order (as Python sorts str).
create function skillet_curator_pass(
    p_orgs uuid[], p_stale timestamptz, p_archive timestamptz, p_now timestamptz,
    p_trigger text, p_replayed boolean, p_write boolean)
returns table (moved bigint, org uuid, planned bigint, transitioned text, skipped text)
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set work_mem = '64MB'  -- sorting and hashing ~100k rows in one statement: no temp files
as $$
begin
    perform set_config('skillet.revisions_bumped_by_statement', 'on', true);
    return query
    with decided as materialized (
        select d.*, d.outcome <> d.from_state and d.outcome in ('active', 'stale', 'archived')
               as moves
        from (
            select p.organization_id as org, p.name,
                   coalesce(u.state, 'active') as from_state,
                   u.last_activity_at as seen,
                   case when v.created_by <> 'agent' then 'not-agent-created'
                        when coalesce(u.pinned, false) then 'pinned'
                        else public.curator_next_state(coalesce(u.state, 'active'),
                                                       u.last_activity_at, p_stale, p_archive)
                   end as outcome
            from public.skill_pointers p
            join public.skill_versions v on v.id = p.version_id
            left join public.skill_usage u
                   on u.organization_id = p.organization_id and u.skill_name = p.name
            where p.organization_id = any(p_orgs)
        ) as d
    ), moved as (
        update public.skill_usage u
        set state = d.outcome,
            archived_at = case when d.outcome = 'archived' then p_now end
        from decided d
        where p_write and d.moves and u.organization_id = d.org and u.skill_name = d.name
          and u.state = d.from_state and not u.pinned
          and u.last_activity_at is not distinct from d.seen
        returning u.organization_id
    ), bumped as (
        insert into public.skill_catalog_revisions as r (organization_id)
        select m.organization_id from moved m group by m.organization_id order by 1
        on conflict (organization_id) do update set revision = r.revision + 1
    ), reports as (
        select d.org,
               count(*) filter (where d.moves) as planned,
               json_agg(json_build_object('name', d.name, 'from', d.from_state,
                                          'to', d.outcome)
                        order by d.name collate "C") filter (where d.moves) as transitioned,
               json_agg(json_build_object('name', d.name, 'reason',
                            case when d.outcome in ('not-agent-created', 'pinned')
                                 then d.outcome else 'no-change' end)
                        order by d.name collate "C") filter (where not d.moves) as skipped
        from decided d group by d.org
    ), per_org as (
        select o.org, coalesce(r.planned, 0) as planned,
               coalesce(r.transitioned, '[]'::json) as transitioned,
               coalesce(r.skipped, '[]'::json) as skipped
        from unnest(p_orgs) as o(org) left join reports r on r.org = o.org
    ), runs as (
        insert into public.curator_runs (organization_id, trigger, ran_at, replayed,
                                         stale_cutoff, archive_cutoff, transitioned, skipped)
        select o.org, p_trigger, p_now, p_replayed, p_stale, p_archive, o.transitioned,
               o.skipped
        from per_org o where p_write
    )
    select (select count(*) from moved), o.org, o.planned, o.transitioned::text,
           o.skipped::text
    from per_org o;
    perform set_config('skillet.revisions_bumped_by_statement', 'off', true);
end;
$$;
revoke all on function skillet_curator_pass(uuid[], timestamptz, timestamptz, timestamptz, text,
    boolean, boolean) from public;
grant execute on function skillet_curator_pass(uuid[], timestamptz, timestamptz, timestamptz,
    text, boolean, boolean) to skillet_worker;

-- Curator reports written more than p_keep_days ago (the database's clock), oldest first, at
-- most p_limit per call; never an org's newest scheduled run (the schedule and `skillet
-- status` read it). Replayed runs (`--now`) go by age alone. How many went.
create function skillet_prune_curator_runs(p_keep_days integer, p_limit integer)
returns bigint
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    with gone as (
        delete from public.curator_runs
        where id in (
            select r.id from public.curator_runs r
            where r.created_at < now() - make_interval(days => p_keep_days)
              and (r.replayed or exists (
                  select 1 from public.curator_runs n
                  where n.organization_id = r.organization_id and not n.replayed
                    and n.ran_at > r.ran_at))
            order by r.created_at
            limit p_limit
        )
        returning 1
    )
    select count(*) from gone
$$;
revoke all on function skillet_prune_curator_runs(integer, integer) from public;
grant execute on function skillet_prune_curator_runs(integer, integer) to skillet_worker;
