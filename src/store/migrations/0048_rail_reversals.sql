-- Reversals of settled partner payouts, asked for by an operator: one per transfer. `requested` until the
-- partner acknowledges the request (`sent`, with its reference), then `succeeded` when its result returns
-- the transfer (one ledger return) or `refused` with the partner's reason. The reversal worker claims due
-- rows by `next_check_at` (send, or ask again about a result that has not come).
CREATE TABLE IF NOT EXISTS rail_reversals (
  id                       text PRIMARY KEY,
  organization_id          text NOT NULL REFERENCES organizations (id),
  transfer_id              text NOT NULL UNIQUE REFERENCES transfers (id),
  config_id                text NOT NULL REFERENCES rail_partner_configs (id),
  partner                  text NOT NULL,
  status                   text NOT NULL CHECK (status IN ('requested', 'sent', 'succeeded', 'refused')),
  reason                   text NOT NULL,
  requested_by             text NOT NULL,
  original_transaction_id  text NOT NULL,
  partner_reference        text,
  partner_transaction_id   text,
  failure_code             text,
  next_check_at            timestamptz,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS rail_reversals_due_idx ON rail_reversals (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS rail_reversals_reference_idx ON rail_reversals (config_id, partner_reference);
CREATE INDEX IF NOT EXISTS rail_reversals_original_idx ON rail_reversals (config_id, original_transaction_id);
CREATE INDEX IF NOT EXISTS rail_reversals_organization_idx ON rail_reversals (organization_id, id DESC);
