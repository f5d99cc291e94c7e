-- Savings products (docs/PRODUCTS.md, "Savings products"): products as data per organization with
-- effective-dated rates, savings accounts (wallets of a product), each account's accrual once per day of the
-- organization's clock, withdrawal notices and withdrawals. Interest is booked daily from the organization's
-- `interest_expense` account to its `interest_payable` account in whole units, and capitalised monthly from
-- `interest_payable` to the wallet; the residual below one unit stays on the account as an exact fraction.

-- The new account kinds, widened from what the constraint is now (other branches add kinds too).
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'ledger_accounts'::regclass AND c.conname = 'ledger_accounts_kind_check';
  ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
  EXECUTE format(
    'ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK ((%s) OR kind IN (%L, %L))',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'interest_expense',
    'interest_payable'
  );
END;
$$;

CREATE FUNCTION mkoba_savings_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'check_violation';
END;
$$;

-- A product's terms never change once created (a different product is a new one); its rate is effective-dated.
CREATE TABLE savings_products (
  id                            text PRIMARY KEY,
  organization_id               text NOT NULL REFERENCES organizations (id),
  name                          text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  currency                      text NOT NULL,
  day_count                     text NOT NULL CHECK (day_count IN ('actual_365_fixed', 'actual_360', 'thirty_360')),
  minimum_balance_minor         bigint NOT NULL CHECK (minimum_balance_minor >= 0),
  access                        text NOT NULL CHECK (access IN ('instant', 'notice', 'fixed_term')),
  notice_days                   integer CHECK (notice_days BETWEEN 1 AND 366),
  term_days                     integer CHECK (term_days BETWEEN 1 AND 3660),
  early_withdrawal_penalty_bps  integer CHECK (early_withdrawal_penalty_bps BETWEEN 0 AND 10000),
  metadata                      jsonb NOT NULL DEFAULT '{}',
  created_by                    text NOT NULL,
  created_at                    timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  CHECK ((access = 'notice') = (notice_days IS NOT NULL)),
  CHECK ((access = 'fixed_term') = (term_days IS NOT NULL)),
  CHECK ((access = 'fixed_term') = (early_withdrawal_penalty_bps IS NOT NULL))
);
CREATE INDEX savings_products_organization_idx ON savings_products (organization_id, id DESC);
CREATE TRIGGER savings_products_append_only BEFORE UPDATE OR DELETE ON savings_products
  FOR EACH ROW EXECUTE FUNCTION mkoba_savings_append_only();

-- A rate in force from a day of the organization's clock until the next one's; never changed, so a day
-- already accrued keeps the rate it was accrued at.
CREATE TABLE savings_product_rates (
  product_id       text NOT NULL REFERENCES savings_products (id),
  effective_from   date NOT NULL,
  annual_rate_bps  integer NOT NULL CHECK (annual_rate_bps BETWEEN 0 AND 10000),
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (product_id, effective_from)
);
CREATE TRIGGER savings_product_rates_append_only BEFORE UPDATE OR DELETE ON savings_product_rates
  FOR EACH ROW EXECUTE FUNCTION mkoba_savings_append_only();

-- A savings account is a wallet of a product: same id. `accrued_parts` is the interest accrued and not yet
-- capitalised, in parts of 262,800,000 (docs/PRODUCTS.md); its whole units are booked as payable.
CREATE TABLE savings_accounts (
  wallet_id            text PRIMARY KEY REFERENCES wallets (id),
  organization_id      text NOT NULL REFERENCES organizations (id),
  product_id           text NOT NULL,
  opened_on            date NOT NULL,
  matures_on           date,
  accrued_through      date NOT NULL,
  accrued_parts        bigint NOT NULL DEFAULT 0 CHECK (accrued_parts >= 0),
  payable_minor        bigint NOT NULL DEFAULT 0,
  interest_paid_minor  bigint NOT NULL DEFAULT 0 CHECK (interest_paid_minor >= 0),
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  FOREIGN KEY (organization_id, product_id) REFERENCES savings_products (organization_id, id),
  CHECK (payable_minor = accrued_parts / 262800000),
  CHECK (accrued_through >= opened_on - 1),
  CHECK (matures_on IS NULL OR matures_on > opened_on)
);
CREATE INDEX savings_accounts_organization_idx ON savings_accounts (organization_id, wallet_id);
CREATE INDEX savings_accounts_product_idx ON savings_accounts (organization_id, product_id, wallet_id);

-- Each account's accrual, once per day (the primary key): what it was computed on and what it gave.
CREATE TABLE savings_accruals (
  wallet_id              text NOT NULL REFERENCES savings_accounts (wallet_id),
  day                    date NOT NULL,
  organization_id        text NOT NULL,
  balance_minor          bigint NOT NULL,
  annual_rate_bps        integer NOT NULL CHECK (annual_rate_bps >= 0),
  day_count_days         integer NOT NULL CHECK (day_count_days >= 0),
  day_count_basis        integer NOT NULL CHECK (day_count_basis IN (360, 365)),
  parts                  bigint NOT NULL CHECK (parts >= 0),
  accrued_parts_after    bigint NOT NULL CHECK (accrued_parts_after >= 0),
  booked_minor           bigint NOT NULL CHECK (booked_minor >= 0),
  capitalized_minor      bigint NOT NULL CHECK (capitalized_minor >= 0),
  booking_entry_id       text REFERENCES journal_entries (id),
  capitalization_entry_id text REFERENCES journal_entries (id),
  created_at             timestamptz NOT NULL,
  PRIMARY KEY (wallet_id, day),
  CHECK ((capitalized_minor > 0) = (capitalization_entry_id IS NOT NULL))
);
CREATE TRIGGER savings_accruals_append_only BEFORE UPDATE OR DELETE ON savings_accruals
  FOR EACH ROW EXECUTE FUNCTION mkoba_savings_append_only();

-- A withdrawal notice: the money named is available from `available_on` (the organization's clock), once.
CREATE TABLE savings_notices (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  wallet_id        text NOT NULL REFERENCES savings_accounts (wallet_id),
  amount_minor     bigint NOT NULL CHECK (amount_minor > 0),
  given_on         date NOT NULL,
  available_on     date NOT NULL,
  status           text NOT NULL CHECK (status IN ('open', 'used')),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK (available_on > given_on)
);
CREATE INDEX savings_notices_account_idx ON savings_notices (organization_id, wallet_id, id DESC);

-- Money out of a savings account, to a wallet of the same owner, with the penalty it paid.
CREATE TABLE savings_withdrawals (
  id                     text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id),
  wallet_id              text NOT NULL REFERENCES savings_accounts (wallet_id),
  destination_wallet_id  text NOT NULL REFERENCES wallets (id),
  amount_minor           bigint NOT NULL CHECK (amount_minor > 0),
  penalty_minor          bigint NOT NULL CHECK (penalty_minor >= 0),
  notice_id              text UNIQUE REFERENCES savings_notices (id),
  day                    date NOT NULL,
  entry_id               text NOT NULL REFERENCES journal_entries (id),
  created_at             timestamptz NOT NULL
);
CREATE INDEX savings_withdrawals_account_idx ON savings_withdrawals (organization_id, wallet_id, id DESC);
CREATE TRIGGER savings_withdrawals_append_only BEFORE UPDATE OR DELETE ON savings_withdrawals
  FOR EACH ROW EXECUTE FUNCTION mkoba_savings_append_only();

-- Money leaves a savings account only as a withdrawal: never as a transfer (to a rail or a wallet).
CREATE FUNCTION mkoba_transfers_not_from_savings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.source_wallet_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM savings_accounts WHERE wallet_id = NEW.source_wallet_id) THEN
    RAISE EXCEPTION 'wallet % is a savings account: money leaves it only as a withdrawal', NEW.source_wallet_id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER transfers_not_from_savings BEFORE INSERT ON transfers
  FOR EACH ROW EXECUTE FUNCTION mkoba_transfers_not_from_savings();
