-- Every key says who created it: the member who made it for themself through the API or the console, the
-- operator who ran `mkoba keys create` on the server (`operator:<user>`), or the sandbox's seed (`seed`).
-- Keys made before this was recorded say `unrecorded`. A description is the creator's own note.
ALTER TABLE api_keys ADD COLUMN created_by text NOT NULL DEFAULT 'unrecorded';
ALTER TABLE api_keys ALTER COLUMN created_by DROP DEFAULT;
ALTER TABLE api_keys ADD COLUMN description text;
