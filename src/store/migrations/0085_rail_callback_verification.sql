-- How a callback's signature was verified before it was stored, where the check needs a network call the
-- applying transaction must not wait on (Fireblocks' webhooks v2: a detached JWS checked against the
-- published JWKS): `jwks`. NULL for every other callback, whose signature (if any) is checked when it is
-- applied. Nullable, so a release that does not know the column keeps writing and reading the table.
ALTER TABLE rail_callbacks ADD COLUMN IF NOT EXISTS verified_by text;
