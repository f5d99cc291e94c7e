-- The rail partner configuration that carries a payout, fixed before the payout is first sent: its status
-- checks, retries and reversal go to the partner that may have accepted it, even after the organization
-- configures another partner for the network or disables this one (docs/RAILS.md).
CREATE TABLE transfer_rail_partners (
  transfer_id      text PRIMARY KEY REFERENCES transfers (id),
  organization_id  text NOT NULL REFERENCES organizations (id),
  rail_partner_id  text NOT NULL REFERENCES rail_partner_configs (id),
  pinned_at        timestamptz NOT NULL
);
