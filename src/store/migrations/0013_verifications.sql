-- KYC and KYB: verifications of what a customer submitted, the customer's status with `documents_required`,
-- an operator's override of its risk level, and per-customer limit usage per UTC day and month.

ALTER TABLE customers DROP CONSTRAINT customers_kyc_status_check;
ALTER TABLE customers ADD CONSTRAINT customers_kyc_status_check
  CHECK (kyc_status IN ('unverified', 'pending', 'verified', 'rejected', 'documents_required'));
ALTER TABLE customers ADD COLUMN risk_override text CHECK (risk_override IN ('low', 'medium', 'high'));
ALTER TABLE customers ADD COLUMN risk_override_reason text;
ALTER TABLE customers ADD COLUMN sanctions_hit boolean NOT NULL DEFAULT false;

CREATE TABLE verifications (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  customer_id      text NOT NULL REFERENCES customers (id),
  status           text NOT NULL CHECK (status IN ('pending', 'verified', 'rejected', 'documents_required')),
  reason           text,
  -- What was submitted, as given (the API shows id numbers masked).
  submission       jsonb NOT NULL,
  -- The sanctions screening of the submitted names.
  screening        jsonb,
  decided_by       text,
  -- When the sandbox provider decides one it deferred.
  decide_at        timestamptz,
  created_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  CHECK ((status = 'pending') = (decided_at IS NULL))
);
CREATE INDEX verifications_customer_idx ON verifications (organization_id, customer_id, id DESC);
-- One verification in progress per customer.
CREATE UNIQUE INDEX verifications_pending_once_idx ON verifications (customer_id) WHERE status = 'pending';
-- The sandbox worker's queue: deferred decisions only.
CREATE INDEX verifications_due_idx ON verifications (decide_at) WHERE status = 'pending' AND decide_at IS NOT NULL;

-- What each customer sent out per currency, UTC day and month: the tier limits' running sums. A row is
-- locked by the ledger writer while it decides, so two transfers cannot both take the last of a limit.
CREATE TABLE customer_limit_usage (
  customer_id   text NOT NULL REFERENCES customers (id),
  currency      text NOT NULL,
  period        text NOT NULL CHECK (period IN ('day', 'month')),
  period_start  date NOT NULL,
  sent_minor    bigint NOT NULL CHECK (sent_minor >= 0),
  PRIMARY KEY (customer_id, currency, period, period_start)
);
