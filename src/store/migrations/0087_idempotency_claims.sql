-- A key claimed before an outbound send (the sandbox's partner feeds): the row holds the in-flight 409 as
-- its answer until the request completes it, and `claimed_until` says how long the claim stands; a claim
-- past it (its process died) frees the key. NULL on every completed record. Older releases read a claim as
-- a recorded 409 `idempotency_key_in_flight`, which is what it means.
ALTER TABLE idempotency_records ADD COLUMN IF NOT EXISTS claimed_until timestamptz;
