-- Agent Skills (agentskills.io) interop. A version keeps the spec's optional fields it was
-- uploaded with (license, compatibility, metadata, allowed-tools: skills.package_frontmatter
-- shapes them), and the SKILL.md bytes exactly as uploaded, so `skillet skills export`
-- returns them byte for byte. Versions from before this migration have `{}` and null: an
-- export renders their SKILL.md from the parsed fields, and a re-import of it compares
-- parsed content instead of bytes (skills.catalog.publish_package).
alter table skill_versions
    add column frontmatter jsonb not null default '{}'::jsonb,
    add column skill_md bytea null;

alter table skill_versions
    add constraint skill_versions_frontmatter_object check (jsonb_typeof(frontmatter) = 'object');
