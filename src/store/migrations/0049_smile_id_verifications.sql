-- Smile ID as an organization's verification provider: its configuration (settings shown back, the API
-- key sealed at rest, the unguessable callback path token), the job each verification was sent as (polled
-- until decided), and every callback received, stored as sent.
CREATE TABLE IF NOT EXISTS verification_provider_configs (
  organization_id     text PRIMARY KEY REFERENCES organizations (id),
  provider            text NOT NULL CHECK (provider IN ('smile_id')),
  settings            jsonb NOT NULL,
  sealed_credentials  text NOT NULL,
  callback_token      text NOT NULL UNIQUE,
  created_at          timestamptz NOT NULL,
  updated_at          timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS verification_jobs (
  verification_id  text PRIMARY KEY REFERENCES verifications (id),
  organization_id  text NOT NULL REFERENCES organizations (id),
  provider         text NOT NULL CHECK (provider IN ('smile_id')),
  -- Smile ID's partner_params.job_id (the verification's id) and user_id (the customer's id).
  job_id           text NOT NULL UNIQUE,
  user_id          text NOT NULL,
  product          text NOT NULL CHECK (product IN ('kyc', 'kyb')),
  state            text NOT NULL CHECK (state IN ('submitting', 'submitted', 'decided', 'refused')),
  smile_job_id     text,
  result_code      text,
  -- When the worker next submits or polls it; null once decided or refused.
  next_attempt_at  timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS verification_jobs_due_idx ON verification_jobs (next_attempt_at)
  WHERE next_attempt_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS verification_callbacks (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  job_id           text,
  body             text NOT NULL,
  body_sha256      text NOT NULL,
  -- applied, duplicate (the job was decided already), bad_signature, unknown_job, malformed
  outcome          text NOT NULL,
  received_at      timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS verification_callbacks_job_idx ON verification_callbacks (organization_id, job_id);
