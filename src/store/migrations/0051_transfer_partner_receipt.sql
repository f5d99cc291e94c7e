-- The partner's receipt for the money a transfer moved (M-Pesa's receipt number, the one the customer's SMS
-- shows), once a partner reports it: shown on the transfer and matched against the partner's statement.
ALTER TABLE transfers ADD COLUMN partner_receipt text;

-- A statement's lines name transfers by it (reconciliation's candidates).
CREATE INDEX transfers_partner_receipt_idx ON transfers (organization_id, partner_receipt)
  WHERE partner_receipt IS NOT NULL;
