-- The skill editor: each version records how it was made (`created_via`) and, until people
-- have accounts, the API key that made it (its prefix and name at the time). Skills written
-- by a person (editor, upload, suggestion) keep created_by 'user': the curator and
-- consolidation treat them as the business's, never as the agent's.

alter table skill_versions
    add column created_via text not null default 'upload'
        check (created_via in ('upload', 'editor', 'agent', 'catalog', 'consolidation',
                               'suggestion')),
    add column author_key_prefix text null check (length(author_key_prefix) <= 64),
    add column author_key_name text null check (length(author_key_name) <= 200);

-- Backfill from what each row already says: the catalog's rows and its forks, a
-- consolidation's proposed umbrellas, the agent's own versions; the rest were uploads.
update skill_versions v set created_via = case
    when v.created_by = 'platform' or v.forked_from_version_id is not null then 'catalog'
    when exists (select 1 from skill_proposals p where p.version_id = v.id) then 'consolidation'
    when v.created_by = 'agent' then 'agent'
    else 'upload'
end;

-- The key that imported or installed a version, as the audit log recorded it ('cli' is not
-- a key).
update skill_versions v set author_key_prefix = a.actor
from audit_log a
where a.after_version_id = v.id and a.outcome = 'ok' and a.actor <> 'cli'
  and a.action in ('skill.import', 'skill.install');
