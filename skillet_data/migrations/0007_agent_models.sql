-- Which model answers for an agent: a provider (`anthropic`, `openai`, `local`, ...) and that
-- provider's model id. Both null = the worker's default model (SKILLET_MODEL). Credentials
-- and base URLs stay in the worker's environment, never in rows. No new table: agents keeps
-- the row-level security policy of migration 0006.
alter table agents
    add column model_provider text null
        constraint agents_model_provider_format
        check (model_provider ~ '^[a-z][a-z0-9_-]{0,31}$'),
    add column model_name text null
        constraint agents_model_name_length
        check (length(model_name) between 1 and 200),
    add constraint agents_model_name_needs_provider
        check (model_name is null or model_provider is not null);
