-- Who gave a number's own WAHA server: an operator (the CLI) vouches for it as given, private
-- or not; one an org's admin gave (the API) is resolved and checked, every address public, at
-- every call the worker makes to it (sends and media fetches), and connected to the addresses
-- checked only. Rows from before say nothing: they are checked (an operator who connected a
-- private server sets it again with `skillet channels credentials`).
alter table channels
    add column waha_server_vouched boolean not null default false;

-- The API changes the URL and, with it, drops the vouch (it never sets it).
grant update (waha_server_vouched) on channels to skillet_api;
