-- Lending: loan products, loans with their fixed schedule, and repayments (docs/PRODUCTS.md, "Lending
-- products"). Money moves only through the ledger: a disbursement debits the organization's loan receivable
-- and credits the borrower's wallet; a repayment debits the wallet and credits the receivable (principal),
-- interest income, loan fee income and penalty income; a write-off debits loan losses and credits the
-- receivable.

-- The new account kinds. Other branches add kinds too, so the constraint is widened from what it is now
-- rather than restated from a list that may already be out of date.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'ledger_accounts'::regclass AND c.conname = 'ledger_accounts_kind_check';
  ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
  EXECUTE format(
    'ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK ((%s) OR kind IN (%L, %L, %L, %L, %L))',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'loan_receivable', 'loan_interest_income', 'loan_fee_income', 'loan_penalty_income', 'loan_loss'
  );
END;
$$;

-- A loan can wait for an approval, as a transfer or a payment batch does. Widened the same way.
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'approvals'::regclass AND c.conname = 'approvals_resource_type_check';
  ALTER TABLE approvals DROP CONSTRAINT approvals_resource_type_check;
  EXECUTE format(
    'ALTER TABLE approvals ADD CONSTRAINT approvals_resource_type_check CHECK ((%s) OR resource_type = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'loan'
  );
END;
$$;

-- A product never changes once written: loans copy its terms, and a new offer is a new product.
CREATE TABLE loan_products (
  id                   text PRIMARY KEY,
  organization_id      text NOT NULL REFERENCES organizations (id),
  name                 text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  currency             text NOT NULL,
  interest_rate_bps    integer NOT NULL CHECK (interest_rate_bps BETWEEN 0 AND 100000),
  term_months          integer NOT NULL CHECK (term_months BETWEEN 1 AND 360),
  amortisation         text NOT NULL CHECK (amortisation IN ('flat', 'declining_balance')),
  origination_fee_bps  integer NOT NULL CHECK (origination_fee_bps BETWEEN 0 AND 5000),
  grace_period_months  integer NOT NULL CHECK (grace_period_months >= 0 AND grace_period_months < term_months),
  penalty_rate_bps     integer NOT NULL CHECK (penalty_rate_bps BETWEEN 0 AND 100000),
  min_principal_minor  bigint NOT NULL CHECK (min_principal_minor > 0),
  max_principal_minor  bigint NOT NULL CHECK (max_principal_minor >= min_principal_minor),
  created_by           text,
  created_at           timestamptz NOT NULL
);
CREATE INDEX loan_products_organization_idx ON loan_products (organization_id, id DESC);
CREATE TRIGGER loan_products_append_only BEFORE UPDATE OR DELETE ON loan_products
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

CREATE TABLE loans (
  id                        text PRIMARY KEY,
  organization_id           text NOT NULL REFERENCES organizations (id),
  product_id                text NOT NULL REFERENCES loan_products (id),
  customer_id               text NOT NULL REFERENCES customers (id),
  wallet_id                 text NOT NULL REFERENCES wallets (id),
  currency                  text NOT NULL,
  principal_minor           bigint NOT NULL CHECK (principal_minor > 0),
  interest_rate_bps         integer NOT NULL CHECK (interest_rate_bps >= 0),
  term_months               integer NOT NULL CHECK (term_months >= 1),
  amortisation              text NOT NULL CHECK (amortisation IN ('flat', 'declining_balance')),
  origination_fee_bps       integer NOT NULL CHECK (origination_fee_bps >= 0),
  grace_period_months       integer NOT NULL CHECK (grace_period_months >= 0 AND grace_period_months < term_months),
  penalty_rate_bps          integer NOT NULL CHECK (penalty_rate_bps >= 0),
  status                    text NOT NULL CHECK (status IN ('pending_approval', 'approved', 'rejected', 'canceled', 'active', 'paid_off', 'written_off')),
  status_reason             text,
  policy_version            integer NOT NULL,
  policy_rule               text NOT NULL,
  policy_decision           text NOT NULL CHECK (policy_decision IN ('allow', 'deny', 'require_approval')),
  approval_id               text REFERENCES approvals (id),
  disbursement_entry_id     text UNIQUE REFERENCES journal_entries (id),
  disbursed_at              timestamptz,
  -- The organization's day the loan was disbursed on; instalments fall due monthly from it.
  disbursed_on              date,
  -- The last of the organization's days whose collection and arrears work is done for this loan.
  processed_through         date,
  -- Overdue principal and interest summed over every day it was overdue: what the penalty accrues on.
  penalty_basis_minor_days  numeric(40, 0) NOT NULL DEFAULT 0 CHECK (penalty_basis_minor_days >= 0),
  penalty_accrued_minor     bigint NOT NULL DEFAULT 0 CHECK (penalty_accrued_minor >= 0),
  penalty_paid_minor        bigint NOT NULL DEFAULT 0 CHECK (penalty_paid_minor >= 0 AND penalty_paid_minor <= penalty_accrued_minor),
  days_past_due             integer NOT NULL DEFAULT 0 CHECK (days_past_due >= 0),
  arrears_bucket            text NOT NULL DEFAULT 'current' CHECK (arrears_bucket IN ('current', 'dpd_1_30', 'dpd_31_60', 'dpd_61_90', 'dpd_90_plus')),
  write_off_entry_id        text UNIQUE REFERENCES journal_entries (id),
  written_off_minor         bigint CHECK (written_off_minor >= 0),
  write_off_reason          text,
  created_by                text,
  created_at                timestamptz NOT NULL,
  updated_at                timestamptz NOT NULL,
  closed_at                 timestamptz,
  -- Disbursed exactly when it is, or was, being repaid; written off exactly when it has its entry.
  CHECK ((disbursement_entry_id IS NOT NULL) = (status IN ('active', 'paid_off', 'written_off'))),
  CHECK ((disbursed_on IS NULL) = (disbursement_entry_id IS NULL)),
  CHECK ((status = 'written_off') = (written_off_minor IS NOT NULL)),
  CHECK ((status = 'pending_approval') <= (approval_id IS NOT NULL))
);
CREATE INDEX loans_organization_idx ON loans (organization_id, id DESC);
CREATE INDEX loans_active_idx ON loans (organization_id, processed_through) WHERE status = 'active';

-- A disbursed loan is never given back to an earlier state, and its status never leaves an end.
CREATE FUNCTION mkoba_loans_status_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status IN ('rejected', 'canceled', 'paid_off', 'written_off') AND NEW.status <> OLD.status THEN
    RAISE EXCEPTION 'loan % is % and stays so', OLD.id, OLD.status USING ERRCODE = 'check_violation';
  END IF;
  IF OLD.disbursement_entry_id IS NOT NULL AND NEW.disbursement_entry_id IS DISTINCT FROM OLD.disbursement_entry_id THEN
    RAISE EXCEPTION 'loan % is disbursed once', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.processed_through < OLD.processed_through THEN
    RAISE EXCEPTION 'the days of loan % are done once, in order', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER loans_status_forward BEFORE UPDATE ON loans
  FOR EACH ROW EXECUTE FUNCTION mkoba_loans_status_forward();
CREATE TRIGGER loans_no_delete BEFORE DELETE ON loans
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- The schedule, fixed at disbursement: what each instalment is due never changes; only what was paid of it.
CREATE TABLE loan_instalments (
  loan_id               text NOT NULL REFERENCES loans (id),
  number                integer NOT NULL CHECK (number >= 1),
  due_date              date NOT NULL,
  principal_minor       bigint NOT NULL CHECK (principal_minor >= 0),
  interest_minor        bigint NOT NULL CHECK (interest_minor >= 0),
  fee_minor             bigint NOT NULL CHECK (fee_minor >= 0),
  principal_paid_minor  bigint NOT NULL DEFAULT 0 CHECK (principal_paid_minor BETWEEN 0 AND principal_minor),
  interest_paid_minor   bigint NOT NULL DEFAULT 0 CHECK (interest_paid_minor BETWEEN 0 AND interest_minor),
  fee_paid_minor        bigint NOT NULL DEFAULT 0 CHECK (fee_paid_minor BETWEEN 0 AND fee_minor),
  PRIMARY KEY (loan_id, number)
);
CREATE FUNCTION mkoba_loan_instalments_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' OR NEW.due_date <> OLD.due_date OR NEW.principal_minor <> OLD.principal_minor
     OR NEW.interest_minor <> OLD.interest_minor OR NEW.fee_minor <> OLD.fee_minor
     OR NEW.principal_paid_minor < OLD.principal_paid_minor OR NEW.interest_paid_minor < OLD.interest_paid_minor
     OR NEW.fee_paid_minor < OLD.fee_paid_minor THEN
    RAISE EXCEPTION 'the schedule of loan % is fixed and what was paid stays paid', OLD.loan_id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER loan_instalments_fixed BEFORE UPDATE OR DELETE ON loan_instalments
  FOR EACH ROW EXECUTE FUNCTION mkoba_loan_instalments_fixed();

-- Each repayment with how it was allocated and the journal entry that moved it.
CREATE TABLE loan_repayments (
  id                text PRIMARY KEY,
  organization_id   text NOT NULL REFERENCES organizations (id),
  loan_id           text NOT NULL REFERENCES loans (id),
  source            text NOT NULL CHECK (source IN ('manual', 'automatic')),
  -- The organization's day it was taken on.
  day               date NOT NULL,
  amount_minor      bigint NOT NULL CHECK (amount_minor > 0),
  penalty_minor     bigint NOT NULL CHECK (penalty_minor >= 0),
  fee_minor         bigint NOT NULL CHECK (fee_minor >= 0),
  interest_minor    bigint NOT NULL CHECK (interest_minor >= 0),
  principal_minor   bigint NOT NULL CHECK (principal_minor >= 0),
  journal_entry_id  text NOT NULL UNIQUE REFERENCES journal_entries (id),
  created_by        text,
  created_at        timestamptz NOT NULL,
  CHECK (amount_minor = penalty_minor + fee_minor + interest_minor + principal_minor)
);
CREATE INDEX loan_repayments_loan_idx ON loan_repayments (loan_id, id DESC);
-- The automatic collection takes from the wallet at most once per loan and day.
CREATE UNIQUE INDEX loan_repayments_automatic_once_idx ON loan_repayments (loan_id, day) WHERE source = 'automatic';
CREATE TRIGGER loan_repayments_append_only BEFORE UPDATE OR DELETE ON loan_repayments
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();
