-- An operator's query of a rail partner's own account balances (M-Pesa's shortcode accounts, MTN MoMo's
-- collection and disbursement accounts): `reported` with the accounts at once where the partner answers at
-- once, else `requested` until its result callback (found by the partner's reference) reports them or a
-- failure.
CREATE TABLE IF NOT EXISTS rail_partner_balance_queries (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  config_id          text NOT NULL REFERENCES rail_partner_configs (id),
  partner            text NOT NULL,
  status             text NOT NULL CHECK (status IN ('requested', 'reported', 'failed')),
  partner_reference  text,
  accounts           jsonb,
  failure_code       text,
  requested_by       text NOT NULL,
  created_at         timestamptz NOT NULL,
  reported_at        timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS rail_partner_balance_queries_reference_idx
  ON rail_partner_balance_queries (config_id, partner_reference) WHERE partner_reference IS NOT NULL;
CREATE INDEX IF NOT EXISTS rail_partner_balance_queries_config_idx
  ON rail_partner_balance_queries (organization_id, config_id, id DESC);
