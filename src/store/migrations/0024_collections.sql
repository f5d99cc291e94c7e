-- Collections: money into a wallet. A mobile-money request-to-pay (asked of a payer; no ledger entry until
-- the rail confirms), or a bank deposit to the wallet's virtual account reference (recorded when the bank
-- reports it). Either way an inbound transfer credits the wallet, and the collection names it.

CREATE TABLE collections (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  wallet_id          text NOT NULL REFERENCES wallets (id),
  amount_minor       bigint NOT NULL CHECK (amount_minor > 0),
  currency           text NOT NULL,
  method             text NOT NULL CHECK (method IN ('mobile_money', 'bank_deposit', 'sandbox')),
  rail               text NOT NULL CHECK (rail IN ('mobile_money', 'bank')),
  network            text,
  payer_phone        text,
  -- A bank deposit: the bank's own reference for it (one deposit, one credit) and the payer's name.
  bank_reference     text,
  payer_name         text,
  reference          text NOT NULL,
  description        text NOT NULL,
  status             text NOT NULL CHECK (status IN ('pending', 'processing', 'succeeded', 'failed')),
  failure_code       text,
  partner_reference  text,
  next_check_at      timestamptz,
  transfer_id        text UNIQUE REFERENCES transfers (id),
  metadata           jsonb NOT NULL,
  created_by         text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  succeeded_at       timestamptz,
  failed_at          timestamptz,
  -- A succeeded collection has credited exactly one transfer; a failed one has its code.
  CHECK ((status = 'succeeded') = (transfer_id IS NOT NULL)),
  CHECK ((status = 'failed') = (failure_code IS NOT NULL)),
  CHECK (status IN ('pending', 'processing') OR next_check_at IS NULL),
  CHECK ((method = 'mobile_money') = (rail = 'mobile_money' AND network IS NOT NULL AND payer_phone IS NOT NULL)),
  CHECK ((method = 'bank_deposit') = (rail = 'bank' AND bank_reference IS NOT NULL)),
  -- The sandbox's fund route: money that arrives as if collected, with no payer to ask.
  CHECK (method <> 'sandbox' OR (status = 'succeeded' AND payer_phone IS NULL AND bank_reference IS NULL))
);
CREATE UNIQUE INDEX collections_bank_reference_idx ON collections (organization_id, bank_reference)
  WHERE bank_reference IS NOT NULL;
CREATE INDEX collections_organization_idx ON collections (organization_id, id DESC);
CREATE INDEX collections_status_idx ON collections (organization_id, status, id DESC);
CREATE INDEX collections_wallet_idx ON collections (organization_id, wallet_id, id DESC);
CREATE INDEX collections_due_idx ON collections (next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX collections_partner_reference_idx ON collections (organization_id, partner_reference)
  WHERE partner_reference IS NOT NULL;

-- A final collection stays final: the status machine, enforced where the rows are.
CREATE FUNCTION collections_status_guard() RETURNS trigger AS $$
BEGIN
  IF OLD.status IN ('succeeded', 'failed') AND NEW.status <> OLD.status THEN
    RAISE EXCEPTION 'collection % is %; it cannot become %', OLD.id, OLD.status, NEW.status;
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER collections_status_guard BEFORE UPDATE ON collections
  FOR EACH ROW EXECUTE FUNCTION collections_status_guard();

-- Callbacks can now name the collection they applied to.
ALTER TABLE rail_callbacks ADD COLUMN collection_id text REFERENCES collections (id);

-- A wallet's virtual account reference: what a payer quotes on a bank transfer so the deposit finds it.
CREATE TABLE wallet_virtual_accounts (
  wallet_id        text PRIMARY KEY REFERENCES wallets (id),
  organization_id  text NOT NULL REFERENCES organizations (id),
  reference        text NOT NULL UNIQUE,
  created_at       timestamptz NOT NULL
);
CREATE INDEX wallet_virtual_accounts_organization_idx ON wallet_virtual_accounts (organization_id, reference);
