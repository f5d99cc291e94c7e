-- The trust ledger: customer money held at trust banks (for USDC and USDT, at a custodian) becomes a ledger
-- account of kind `trust` per organization and currency. Bank deposits and on-chain deposits are received
-- into it, and operators record the sweeps between a rail partner's float and it. The daily safeguarding
-- report gains the ledger's trust balance as of the end of the day, and a difference from the bank's figure
-- opens a `trust_balance_mismatch` exception (docs/SAFEGUARDING.md).

-- The new account kind and exception kind. Other branches add kinds too, so each constraint is widened from
-- what it is now rather than restated from a list that may already be out of date.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'ledger_accounts'::regclass AND c.conname = 'ledger_accounts_kind_check';
  ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
  EXECUTE format(
    'ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK ((%s) OR kind = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'trust'
  );

  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'reconciliation_exceptions'::regclass AND c.conname = 'reconciliation_exceptions_kind_check';
  ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exceptions_kind_check;
  EXECUTE format(
    'ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exceptions_kind_check CHECK ((%s) OR kind = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'trust_balance_mismatch'
  );
END;
$$;

-- Where a trust account is held: a bank account for fiat, a custodian's wallet for a stablecoin (the only
-- pairing that can hold the money). Stablecoin trust accounts configured before this were custody wallets
-- in all but name.
ALTER TABLE trust_accounts ADD COLUMN type text NOT NULL DEFAULT 'bank_account'
  CHECK (type IN ('bank_account', 'custody_wallet'));
UPDATE trust_accounts SET type = 'custody_wallet' WHERE currency IN ('USDC', 'USDT');
ALTER TABLE trust_accounts ADD CONSTRAINT trust_accounts_type_currency_check
  CHECK ((type = 'custody_wallet') = (currency IN ('USDC', 'USDT')));

-- Sweeps: money an operator moved between a rail partner's float and the trust account, each posted once
-- as its own journal entry. A reference is the movement's identity at the partner: recorded once per
-- organization, rail and currency.
CREATE TABLE safeguarding_sweeps (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  currency          text NOT NULL,
  rail              text NOT NULL CHECK (rail <> 'internal'),
  direction         text NOT NULL CHECK (direction IN ('to_trust', 'from_trust')),
  amount_minor      bigint NOT NULL CHECK (amount_minor > 0),
  reference         text NOT NULL CHECK (length(reference) BETWEEN 1 AND 100),
  value_date        date NOT NULL,
  trust_account_id  text REFERENCES trust_accounts (id),
  journal_entry_id  text NOT NULL UNIQUE REFERENCES journal_entries (id),
  created_by        text NOT NULL,
  created_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX safeguarding_sweeps_reference_idx
  ON safeguarding_sweeps (organization_id, rail, currency, reference);
-- The list, newest first, and its filters.
CREATE INDEX safeguarding_sweeps_organization_idx ON safeguarding_sweeps (organization_id, id DESC);
CREATE INDEX safeguarding_sweeps_currency_idx ON safeguarding_sweeps (organization_id, currency, id DESC);
CREATE TRIGGER safeguarding_sweeps_append_only BEFORE UPDATE OR DELETE ON safeguarding_sweeps
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- The report's ledger side: the trust account's balance as of the end of the day (null on reports written
-- before the ledger had one), the bank's figure minus it (null while a balance is missing), and the
-- exception a difference opened.
ALTER TABLE safeguarding_reports
  ADD COLUMN ledger_trust_balance_minor bigint,
  ADD COLUMN ledger_difference_minor bigint,
  ADD COLUMN mismatch_exception_id text REFERENCES reconciliation_exceptions (id),
  ADD CONSTRAINT safeguarding_reports_ledger_difference_check CHECK (
    ledger_difference_minor IS NULL
    OR (ledger_trust_balance_minor IS NOT NULL AND trust_balance_minor IS NOT NULL
        AND ledger_difference_minor = trust_balance_minor - ledger_trust_balance_minor)
  );
