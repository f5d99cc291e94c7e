-- Compliance review cases: a transfer held `in_review` (its funds held on the ledger) until an operator
-- clears it (it goes on to the rail) or rejects it (its hold is released). Screening hits, AML rules and rail
-- credits that arrived for a frozen wallet share the one queue.

CREATE TABLE review_cases (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  kind             text NOT NULL CHECK (kind IN ('screening', 'aml', 'frozen_wallet')),
  status           text NOT NULL CHECK (status IN ('open', 'cleared', 'rejected')),
  transfer_id      text REFERENCES transfers (id),
  customer_id      text REFERENCES customers (id),
  wallet_id        text REFERENCES wallets (id),
  -- A customer's verification held by a screening hit on the names it submitted.
  verification_id  text REFERENCES verifications (id),
  -- What opened the case, for the operator: screening hits or AML rule hits (never shown to integrators).
  findings         jsonb NOT NULL,
  note             text,
  decided_by       text,
  created_at       timestamptz NOT NULL,
  decided_at       timestamptz,
  CHECK ((status = 'open') = (decided_at IS NULL))
);
CREATE INDEX review_cases_organization_idx ON review_cases (organization_id, id DESC);
CREATE INDEX review_cases_status_idx ON review_cases (organization_id, status, id DESC);
-- One open case per transfer: a second hold for review of the same transfer is a bug.
CREATE UNIQUE INDEX review_cases_open_transfer_idx ON review_cases (transfer_id) WHERE status = 'open';
CREATE INDEX review_cases_transfer_idx ON review_cases (organization_id, transfer_id) WHERE transfer_id IS NOT NULL;
CREATE UNIQUE INDEX review_cases_open_verification_idx ON review_cases (verification_id)
  WHERE status = 'open' AND verification_id IS NOT NULL;

-- Who a transfer pays, as one comparable key (the AML rule on new counterparties asks whether a wallet paid
-- this key before). One definition, used by the column and by the look-up of a new transfer's key.
CREATE FUNCTION mkoba_counterparty_key(destination jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE destination->>'type'
    WHEN 'wallet' THEN 'wallet:' || (destination->>'wallet')
    WHEN 'mobile_money' THEN 'mobile_money:' || (destination->>'phone')
    WHEN 'bank_account' THEN 'bank_account:' || (destination->>'bank_code') || ':' || (destination->>'account_number')
    WHEN 'paybill' THEN 'paybill:' || (destination->>'business_number') || ':' || (destination->>'account_reference')
    WHEN 'till' THEN 'till:' || (destination->>'till_number')
    WHEN 'card' THEN 'card:' || (destination->>'token')
    ELSE (destination->>'type') || ':' || destination::text
  END
$$;
ALTER TABLE transfers ADD COLUMN counterparty_key text GENERATED ALWAYS AS (mkoba_counterparty_key(destination)) STORED;
CREATE INDEX transfers_counterparty_idx ON transfers (source_wallet_id, counterparty_key)
  WHERE source_wallet_id IS NOT NULL;
