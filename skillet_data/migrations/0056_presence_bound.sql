-- The read mark's statement runs like the turn's: as skillet_bound, so the tenant check inside
-- it trusts the org it bound with its proof (its first statement) instead of recomputing that
-- proof for every table it reads; it is one more statement per model-answered burst.
grant create on schema public to skillet_bound;
do $$
declare
    f regprocedure := 'skillet_presence_target(uuid, text, uuid, text, boolean)'::regprocedure;
begin
    execute format('alter function %s security definer', f);
    execute format('alter function %s set search_path = public, pg_catalog, pg_temp', f);
    execute format('alter function %s owner to skillet_bound', f);
    execute format('revoke all on function %s from public', f);
    execute format('grant execute on function %s to skillet_worker, skillet_api', f);
end
$$;
revoke create on schema public from skillet_bound;
