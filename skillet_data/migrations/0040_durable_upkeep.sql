-- Two upkeep functions for the worker's crons, across orgs, each SECURITY DEFINER for
-- skillet_worker only and bounded per call:
--   skillet_prune_org_events        the events outbox (0029) forgets what is settled: events
--                                   delivered or given up (failed) more than p_keep_days ago,
--                                   a batch per call; an event still pending (due, retrying
--                                   or claimed by a pass in flight) is never deleted.
--   skillet_echoes_pending_since    the pending echoes (0030) whose settle job was lost (Redis
--                                   wiped, or the enqueue failed after the row was stored),
--                                   for the conversation sweep to enqueue again.

-- The retention's scan: settled events, oldest first (pending ones have org_events_due_idx).
create index org_events_settled_idx on org_events (created_at) where status <> 'pending';

create function skillet_prune_org_events(p_keep_days integer, p_limit integer)
returns bigint
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
    v_deleted bigint;
begin
    -- A caller's slip (0 or a negative) must not empty the table.
    if p_keep_days is null or p_keep_days < 1 then
        raise exception 'keep_days_invalid: %', p_keep_days using errcode = '22023';
    end if;
    with doomed as (
        select e.id from public.org_events e
        where e.status in ('delivered', 'failed')
          and e.created_at < now() - make_interval(days => p_keep_days)
        order by e.created_at
        limit greatest(least(coalesce(p_limit, 0), 10000), 0)
        -- A row a settle is writing right now is left for the next run.
        for update skip locked
    ), gone as (
        delete from public.org_events e using doomed where e.id = doomed.id
        returning 1
    )
    select count(*) into v_deleted from gone;
    return v_deleted;
end;
$$;
comment on function skillet_prune_org_events(integer, integer) is $$The events retention
(jobs.events_retention): delete, across orgs, at most p_limit (capped at 10,000) settled events
(status 'delivered' or 'failed') created more than p_keep_days (>= 1) ago by the database's
clock, oldest first, skipping rows locked by a settle; a pending event (due, retrying or
claimed) is never deleted. Returns how many went. SECURITY DEFINER, for skillet_worker.$$;
revoke all on function skillet_prune_org_events(integer, integer) from public;
grant execute on function skillet_prune_org_events(integer, integer) to skillet_worker;

create function skillet_echoes_pending_since(p_after_s double precision, p_limit integer)
returns table (organization_id uuid, echo_id uuid, external_id text)
language sql stable security definer
set search_path = pg_catalog, pg_temp
as $$
    select e.organization_id, e.id, e.external_id
    from public.message_echoes e
    where e.status = 'pending'
      and e.received_at < now() - make_interval(secs => greatest(p_after_s, 0))
    order by e.received_at, e.id
    limit greatest(least(coalesce(p_limit, 0), 10000), 0)
$$;
comment on function skillet_echoes_pending_since(double precision, integer) is $$The
conversation sweep (jobs.echo_sweep): echoes still pending more than p_after_s seconds after
they arrived (their settle job was lost), across orgs, oldest first, at most p_limit (capped at
10,000); the ids that make the settle job's id only (the job settles under its org).
SECURITY DEFINER, for skillet_worker.$$;
revoke all on function skillet_echoes_pending_since(double precision, integer) from public;
grant execute on function skillet_echoes_pending_since(double precision, integer)
    to skillet_worker;
