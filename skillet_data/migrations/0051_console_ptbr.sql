-- The people sign-in limit's failures are forgotten on a schedule, not only when the same
-- e-mail fails again: skillet_person_sign_in_failed deletes an e-mail's old rows on its next
-- failure, so an e-mail that fails once and never again kept its row forever.

-- The sweep's scan: oldest first, across e-mails.
create index person_sign_in_failures_age_idx on person_sign_in_failures (failed_at);

create function skillet_forget_sign_in_failures(p_limit integer)
returns bigint
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
    with doomed as (
        select f.ctid from public.person_sign_in_failures f
        where f.failed_at <= now() - interval '1 hour'
        order by f.failed_at
        limit greatest(least(coalesce(p_limit, 0), 10000), 0)
        -- A row a sign-in is counting right now is left for the next run.
        for update skip locked
    ), gone as (
        delete from public.person_sign_in_failures f using doomed where f.ctid = doomed.ctid
        returning 1
    )
    select count(*) from gone
$$;
comment on function skillet_forget_sign_in_failures(integer) is $$The hourly retention
(jobs.events_retention): delete at most p_limit (capped at 10,000) failed people sign-ins older
than the limit's hour (the only window skillet_person_sign_in_lookup counts), oldest first, by
the database's clock. Returns how many went. SECURITY DEFINER, for skillet_worker.$$;
revoke all on function skillet_forget_sign_in_failures(integer) from public;
grant execute on function skillet_forget_sign_in_failures(integer) to skillet_worker;
