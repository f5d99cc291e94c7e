-- Every call Mkoba made to an organization's verification provider (Smile ID), and every callback it
-- received, one row each: what it was, which job and verification, Smile ID's HTTP status and code, the
-- outcome and how long it took. Never the request or answer itself (they carry personal data), never the
-- signature or key: the callbacks' bodies are kept apart in verification_callbacks.
CREATE TABLE IF NOT EXISTS verification_provider_calls (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  provider         text NOT NULL CHECK (provider IN ('smile_id')),
  kind             text NOT NULL CHECK (kind IN ('submit', 'job_status', 'callback')),
  -- The path called under the configured base URL; null for a callback (its path holds the token).
  path             text,
  job_id           text,
  verification_id  text,
  http_status      integer,
  result_code      text,
  outcome          text NOT NULL CHECK (outcome IN ('accepted', 'refused', 'timeout', 'error')),
  -- Why, in a word: a callback's stored outcome (applied, duplicate, bad_signature, …), a call's failure.
  detail           text,
  duration_ms      integer,
  at               timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS verification_provider_calls_verification_idx
  ON verification_provider_calls (organization_id, verification_id);
