-- Meaning, not only words: one vector per skill version, backend and model, computed after
-- the version is committed (at its first read by a cycle or an authoring page), never inside
-- a turn's commit. model_id names the model and its version ("enpt@0.3.0"): a new model
-- computes new rows beside the old, never compares across models. organization_id null is
-- the platform catalog (stored once, read by every org, written by the system role only).
create table skill_vectors (
    organization_id uuid null references organizations (id),
    version_id      uuid not null references skill_versions (id),
    backend         text not null check (backend in ('embedded', 'embeddings')),
    model_id        text not null check (length(model_id) between 1 and 200),
    vector          real[] not null
        check (cardinality(vector) between 1 and 8192 and array_ndims(vector) = 1),
    created_at      timestamptz not null default now(),
    constraint skill_vectors_key unique nulls not distinct
        (organization_id, version_id, backend, model_id)
);

alter table skill_vectors enable row level security;
alter table skill_vectors force row level security;
create policy tenant_isolation on skill_vectors
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy platform_catalog_read on skill_vectors for select
    using (organization_id is null);
create policy system_access on skill_vectors as permissive for all to skillet_system
    using (true) with check (true);
revoke all on skill_vectors from public;
grant select, insert on skill_vectors to skillet_worker, skillet_api;

-- Links and proposals measured by the embedded model are marked so.
alter table skill_links drop constraint skill_links_backend_check;
alter table skill_links add constraint skill_links_backend_check
    check (backend in ('lexical', 'embeddings', 'embedded'));
alter table skill_proposals drop constraint skill_proposals_backend_check;
alter table skill_proposals add constraint skill_proposals_backend_check
    check (backend in ('lexical', 'embeddings', 'embedded'));
