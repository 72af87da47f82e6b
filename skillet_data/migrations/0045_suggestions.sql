-- Sugestões: what people of the business answered customers, grouped, for "Ensinar o agente".
-- Lessons and groups are read from messages (suggestions.lessons, suggestions.grouping);
-- only two things are stored:
--   suggestion_dismissals  a group a person hid: its id and the lessons it held then; it
--                          shows again once a lesson not in that list joins it;
--   skill_drafts.suggestion  on a draft made from a group: the group, its lessons, the values
--                          privacy removed from the body or kept in it (a reviewer may restore
--                          a removed one), and the questions no keyword matches.

alter table skill_drafts add column suggestion jsonb null
    check (suggestion is null or jsonb_typeof(suggestion) = 'object');

create table suggestion_dismissals (
    organization_id uuid not null references organizations (id),
    group_id        uuid not null,  -- the group's earliest lesson (a person's message id)
    lesson_ids      uuid[] not null check (cardinality(lesson_ids) between 1 and 10000),
    dismissed_by    text not null check (length(dismissed_by) between 1 and 64),
    dismissed_at    timestamptz not null default now(),
    primary key (organization_id, group_id)
);

alter table suggestion_dismissals enable row level security;
alter table suggestion_dismissals force row level security;
create policy tenant_isolation on suggestion_dismissals
    using (organization_id = (select skillet_current_org()))
    with check (organization_id = (select skillet_current_org()));
create policy system_access on suggestion_dismissals as permissive for all to skillet_system
    using (true) with check (true);

revoke all on suggestion_dismissals from public;
grant select, insert, update on suggestion_dismissals to skillet_api;
