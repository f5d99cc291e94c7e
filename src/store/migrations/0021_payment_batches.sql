-- Payment batches: many payouts submitted at once from one wallet. The total is held on the ledger (a hold
-- from the wallet to the organization's batch reserve account) while the batch waits for its approval and
-- while it runs; each item becomes an ordinary transfer, and as items execute the hold shrinks to what is
-- still to be paid, in the same transaction. A process killed mid-batch resumes at the first pending item.

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('wallet', 'rail_settlement', 'rail_clearing', 'payment_batch_reserve'));

CREATE TABLE payment_batches (
  id                     text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id),
  reference              text NOT NULL,
  source_wallet_id       text NOT NULL REFERENCES wallets (id),
  currency               text NOT NULL,
  status                 text NOT NULL CHECK (status IN ('validating', 'pending_approval', 'processing', 'completed',
                                                          'partially_failed', 'failed', 'canceled')),
  failure_code           text,
  item_count             integer NOT NULL CHECK (item_count > 0),
  total_minor            bigint NOT NULL CHECK (total_minor > 0),
  succeeded_count        integer NOT NULL DEFAULT 0,
  failed_count           integer NOT NULL DEFAULT 0,
  canceled_count         integer NOT NULL DEFAULT 0,
  -- The hold of what is still to be paid, and its amount; null once nothing is held.
  reservation_entry_id   text REFERENCES journal_entries (id),
  reserved_minor         bigint NOT NULL DEFAULT 0 CHECK (reserved_minor >= 0),
  created_by             text NOT NULL,
  approval_id            text,
  authorization_decision jsonb,
  metadata               jsonb NOT NULL DEFAULT '{}',
  -- The worker's lease on the batch while it runs a step.
  lease_until            timestamptz,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  finished_at            timestamptz,
  CHECK (succeeded_count + failed_count + canceled_count <= item_count)
);
CREATE UNIQUE INDEX payment_batches_reference_idx ON payment_batches (organization_id, reference);
CREATE INDEX payment_batches_organization_idx ON payment_batches (organization_id, id DESC);
CREATE INDEX payment_batches_status_idx ON payment_batches (organization_id, status, id DESC);
-- The worker's queue: batches with a step to run.
CREATE INDEX payment_batches_work_idx ON payment_batches (updated_at) WHERE status IN ('validating', 'processing');

CREATE TABLE payment_batch_items (
  batch_id               text NOT NULL REFERENCES payment_batches (id),
  position               integer NOT NULL CHECK (position >= 1),
  reference              text NOT NULL,
  destination            jsonb NOT NULL,
  destination_wallet_id  text REFERENCES wallets (id),
  rail                   text NOT NULL,
  amount_minor           bigint NOT NULL CHECK (amount_minor > 0),
  metadata               jsonb NOT NULL DEFAULT '{}',
  status                 text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled')),
  transfer_id            text REFERENCES transfers (id),
  failure_code           text,
  failure_detail         text,
  updated_at             timestamptz NOT NULL,
  PRIMARY KEY (batch_id, position),
  CHECK ((status = 'succeeded') = (transfer_id IS NOT NULL))
);
CREATE UNIQUE INDEX payment_batch_items_reference_idx ON payment_batch_items (batch_id, reference);
CREATE INDEX payment_batch_items_pending_idx ON payment_batch_items (batch_id, position) WHERE status = 'pending';

ALTER TABLE approvals DROP CONSTRAINT approvals_resource_type_check;
ALTER TABLE approvals ADD CONSTRAINT approvals_resource_type_check
  CHECK (resource_type IN ('transfer', 'policy_change', 'payment_batch'));
