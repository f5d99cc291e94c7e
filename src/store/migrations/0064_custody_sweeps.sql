-- Sweeps of deposits out of wallets' custody vault accounts into the payout (source) vault, through the
-- custody partner (Fireblocks: a VAULT_ACCOUNT to VAULT_ACCOUNT transaction whose externalTxId is the
-- sweep's id). Recorded `pending` before the partner is asked, so a process that dies after the partner
-- accepted finds it by externalTxId instead of sending again; `completed` with the trust ledger's sweep.
CREATE TABLE IF NOT EXISTS custody_sweeps (
  id                      text PRIMARY KEY,
  organization_id         text NOT NULL REFERENCES organizations (id),
  config_id               text NOT NULL REFERENCES rail_partner_configs (id),
  vault_account_id        text NOT NULL,
  asset_id                text NOT NULL,
  currency                text NOT NULL,
  amount_minor            bigint NOT NULL CHECK (amount_minor > 0),
  status                  text NOT NULL CHECK (status IN ('pending', 'submitted', 'completed', 'failed')),
  partner_transaction_id  text,
  failure_code            text,
  safeguarding_sweep_id   text REFERENCES safeguarding_sweeps (id),
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL
);
-- One open sweep per asset wallet: two workers finding the same deposits make one sweep.
CREATE UNIQUE INDEX IF NOT EXISTS custody_sweeps_open_idx ON custody_sweeps (config_id, vault_account_id, asset_id)
  WHERE status IN ('pending', 'submitted');
CREATE INDEX IF NOT EXISTS custody_sweeps_organization_idx ON custody_sweeps (organization_id, id DESC);
