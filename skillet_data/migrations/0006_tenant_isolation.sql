-- Tenant isolation in the database itself: row-level security on every org-scoped table.
-- Workers connect, then SET ROLE skillet_app (not the owner, so policies apply) and bind
-- one org per connection use (`skillet.organization_id`); cross-org system work (the
-- curator, telemetry batches, dead letters) opts in explicitly with `skillet.system`.
-- A query that forgets its org filter therefore still sees only its own org's rows.
-- Tables added by later migrations must enable RLS and add their policy (a test checks).

do $$
begin
    if not exists (select 1 from pg_roles where rolname = 'skillet_app') then
        create role skillet_app nologin;
    end if;
end
$$;
grant skillet_app to current_user;

grant usage on schema public to skillet_app;
grant select, insert, update, delete on all tables in schema public to skillet_app;
grant usage, select on all sequences in schema public to skillet_app;
revoke all on schema_migrations from skillet_app;
alter default privileges in schema public
    grant select, insert, update, delete on tables to skillet_app;
alter default privileges in schema public grant usage, select on sequences to skillet_app;

create function skillet_current_org() returns uuid
language sql stable as $$
    select nullif(current_setting('skillet.organization_id', true), '')::uuid
$$;

create function skillet_is_system() returns boolean
language sql stable as $$
    select coalesce(current_setting('skillet.system', true), '') = 'on'
$$;

do $$
declare
    t record;
begin
    for t in
        select c.table_name, c.is_nullable
        from information_schema.columns c
        join information_schema.tables tb
          on tb.table_schema = c.table_schema and tb.table_name = c.table_name
        where c.table_schema = 'public' and c.column_name = 'organization_id'
          and tb.table_type = 'BASE TABLE'
    loop
        execute format('alter table %I enable row level security', t.table_name);
        execute format(
            'create policy tenant_isolation on %I
                 using (skillet_is_system() or organization_id = skillet_current_org())
                 with check (skillet_is_system() or organization_id = skillet_current_org())',
            t.table_name);
        if t.is_nullable = 'YES' then
            -- organization_id null = the platform catalog: every org may read it.
            execute format(
                'create policy platform_catalog_read on %I for select
                     using (organization_id is null)',
                t.table_name);
        end if;
    end loop;
end
$$;

alter table organizations enable row level security;
create policy tenant_isolation on organizations
    using (skillet_is_system() or id = skillet_current_org())
    with check (skillet_is_system());

alter table dead_letters enable row level security;
create policy system_only on dead_letters
    using (skillet_is_system()) with check (skillet_is_system());
