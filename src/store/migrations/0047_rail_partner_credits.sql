-- Payers' own payments a rail partner reports (M-Pesa C2B confirmations), one row per partner transaction:
-- whichever copy of a confirmation is applied first claims the row, and the payment is credited to a wallet
-- or sent to the exception queue once, however often, late or out of order its confirmations arrive.
CREATE TABLE rail_partner_credits (
  organization_id         text NOT NULL REFERENCES organizations (id),
  partner                 text NOT NULL,
  partner_transaction_id  text NOT NULL,
  callback_id             text NOT NULL REFERENCES rail_callbacks (id),
  transfer_id             text REFERENCES transfers (id),
  exception_id            text REFERENCES reconciliation_exceptions (id),
  created_at              timestamptz NOT NULL,
  PRIMARY KEY (organization_id, partner, partner_transaction_id),
  CHECK (transfer_id IS NULL OR exception_id IS NULL)
);
