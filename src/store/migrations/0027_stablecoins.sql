-- Stablecoin routes: per-route limits on withdrawals, deposit addresses per wallet and network, deposits
-- seen on chain (credited once, after their confirmations), conversion rates, quotes and conversions
-- between a fiat wallet and a stablecoin wallet, and the conversion system accounts.

-- Limits on withdrawals per route, in the asset's minor units (null: none beyond the rail's bounds). The
-- daily limit counts the organization's withdrawals on the route created that UTC day that moved or still
-- may move money.
ALTER TABLE digital_asset_routes ADD COLUMN single_max_minor bigint CHECK (single_max_minor > 0);
ALTER TABLE digital_asset_routes ADD COLUMN daily_max_minor bigint CHECK (daily_max_minor > 0);
-- The route-limit sum reads only the organization's digital-asset withdrawals of the day.
CREATE INDEX transfers_digital_asset_day_idx ON transfers (organization_id, currency, created_at)
  WHERE rail = 'digital_asset' AND direction = 'outbound';

-- The conversion account (per organization and currency) is the treasury's side of a mint or redeem.
-- The kind check is extended from whatever it allows now, so kinds added by migrations merged beside this
-- one are kept.
DO $$
DECLARE
  allowed text[];
BEGIN
  SELECT array_agg(DISTINCT m[1]) INTO allowed
    FROM pg_constraint c, regexp_matches(pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') AS m
   WHERE c.conname = 'ledger_accounts_kind_check' AND c.conrelid = 'ledger_accounts'::regclass;
  allowed := array_append(array_remove(allowed, 'conversion'), 'conversion');
  ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
  EXECUTE format('ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind = ANY (%L::text[]))', allowed);
END;
$$;

-- One address per wallet and network; an address belongs to one wallet, whatever the organization.
CREATE TABLE deposit_addresses (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  wallet_id        text NOT NULL REFERENCES wallets (id),
  asset            text NOT NULL CHECK (asset IN ('USDC', 'USDT')),
  network          text NOT NULL CHECK (network ~ '^[a-z][a-z0-9_]{1,31}$'),
  address          text NOT NULL,
  created_at       timestamptz NOT NULL,
  UNIQUE (wallet_id, network),
  UNIQUE (network, address)
);
CREATE INDEX deposit_addresses_organization_idx ON deposit_addresses (organization_id, wallet_id, id);

-- A transfer of the asset to a deposit address, as the chain reports it (confirmations, included or
-- dropped), and what we made of it (pending, credited, reorged).
CREATE TABLE deposits (
  id                        text PRIMARY KEY,
  organization_id           text NOT NULL REFERENCES organizations (id),
  wallet_id                 text NOT NULL REFERENCES wallets (id),
  deposit_address_id        text NOT NULL REFERENCES deposit_addresses (id),
  asset                     text NOT NULL,
  network                   text NOT NULL,
  address                   text NOT NULL,
  tx_hash                   text NOT NULL,
  log_index                 integer NOT NULL CHECK (log_index >= 0),
  amount_minor              bigint NOT NULL CHECK (amount_minor > 0),
  confirmations             integer NOT NULL CHECK (confirmations >= 0),
  chain_state               text NOT NULL CHECK (chain_state IN ('included', 'dropped')),
  required_confirmations    integer NOT NULL CHECK (required_confirmations > 0),
  status                    text NOT NULL CHECK (status IN ('pending', 'credited', 'reorged')),
  transfer_id               text UNIQUE REFERENCES transfers (id),
  travel_rule_evidence_id   text,
  travel_rule_required      boolean,
  next_check_at             timestamptz,
  created_at                timestamptz NOT NULL,
  updated_at                timestamptz NOT NULL,
  credited_at               timestamptz,
  reorged_at                timestamptz,
  CHECK ((status = 'credited') = (transfer_id IS NOT NULL)),
  CHECK (status <> 'credited' OR confirmations >= required_confirmations),
  CHECK (status <> 'reorged' OR chain_state = 'dropped')
);
-- A chain transfer is one deposit: the same transaction and log index reported again is the same deposit.
-- A reorged one may be mined again under the same hash, and is then a new deposit.
CREATE UNIQUE INDEX deposits_chain_transfer_idx ON deposits (network, tx_hash, log_index)
  WHERE status <> 'reorged';
CREATE INDEX deposits_organization_idx ON deposits (organization_id, id DESC);
CREATE INDEX deposits_wallet_idx ON deposits (organization_id, wallet_id, id DESC);
CREATE INDEX deposits_queue_idx ON deposits (next_check_at) WHERE next_check_at IS NOT NULL;

-- A deposit's status only moves forward: pending → credited or reorged, never back, never between finals.
CREATE FUNCTION mkoba_check_deposit_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status <> NEW.status AND OLD.status <> 'pending' THEN
    RAISE EXCEPTION 'deposit % is %: it cannot become %', OLD.id, OLD.status, NEW.status;
  END IF;
  IF OLD.status <> 'pending' AND (OLD.amount_minor <> NEW.amount_minor OR OLD.wallet_id <> NEW.wallet_id) THEN
    RAISE EXCEPTION 'deposit % is final', OLD.id;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER deposits_transition BEFORE UPDATE ON deposits
  FOR EACH ROW EXECUTE FUNCTION mkoba_check_deposit_transition();

-- Conversion rates per organization: units of `to_currency` for one of `from_currency`, exact decimals.
CREATE TABLE conversion_rates (
  organization_id  text NOT NULL REFERENCES organizations (id),
  from_currency    text NOT NULL,
  to_currency      text NOT NULL,
  rate             text NOT NULL CHECK (rate ~ '^[0-9]{1,9}(\.[0-9]{1,12})?$'),
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, from_currency, to_currency),
  CHECK (from_currency <> to_currency)
);

CREATE TABLE conversion_quotes (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  customer_id        text NOT NULL REFERENCES customers (id),
  from_wallet_id     text NOT NULL REFERENCES wallets (id),
  to_wallet_id       text NOT NULL REFERENCES wallets (id),
  direction          text NOT NULL CHECK (direction IN ('mint', 'redeem')),
  from_currency      text NOT NULL,
  to_currency        text NOT NULL,
  from_amount_minor  bigint NOT NULL CHECK (from_amount_minor > 0),
  to_amount_minor    bigint NOT NULL CHECK (to_amount_minor > 0),
  rate               text NOT NULL,
  fee_minor          bigint NOT NULL CHECK (fee_minor >= 0),
  status             text NOT NULL CHECK (status IN ('open', 'executed')),
  conversion_id      text UNIQUE,
  created_at         timestamptz NOT NULL,
  expires_at         timestamptz NOT NULL,
  CHECK ((status = 'executed') = (conversion_id IS NOT NULL))
);
CREATE INDEX conversion_quotes_organization_idx ON conversion_quotes (organization_id, id DESC);

-- A conversion executed a quote once: its two journal entries, one per currency, each balanced.
CREATE TABLE conversions (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  quote_id           text NOT NULL UNIQUE REFERENCES conversion_quotes (id),
  customer_id        text NOT NULL REFERENCES customers (id),
  from_wallet_id     text NOT NULL REFERENCES wallets (id),
  to_wallet_id       text NOT NULL REFERENCES wallets (id),
  direction          text NOT NULL CHECK (direction IN ('mint', 'redeem')),
  from_currency      text NOT NULL,
  to_currency        text NOT NULL,
  from_amount_minor  bigint NOT NULL CHECK (from_amount_minor > 0),
  to_amount_minor    bigint NOT NULL CHECK (to_amount_minor > 0),
  rate               text NOT NULL,
  fee_minor          bigint NOT NULL CHECK (fee_minor >= 0),
  debit_entry_id     text NOT NULL UNIQUE REFERENCES journal_entries (id),
  credit_entry_id    text NOT NULL UNIQUE REFERENCES journal_entries (id),
  created_by         text,
  created_at         timestamptz NOT NULL
);
CREATE INDEX conversions_organization_idx ON conversions (organization_id, id DESC);
CREATE TRIGGER conversions_append_only BEFORE UPDATE OR DELETE ON conversions
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();
