-- Fees: an organization's fee schedule, versioned as a whole like its policy; each transfer records the fee
-- it paid and the version and rule that decided it. The fee is held and posted with the transfer, in the
-- same journal entries, to the organization's `fee_income` account in the currency (docs/FEES.md).

-- The new account kind. Other branches add kinds too, so the constraint is widened from what it is now
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
    'ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK ((%s) OR kind = %L)',
    substring(current_check FROM '^CHECK \((.*)\)$'),
    'fee_income'
  );
END;
$$;

-- One row per version, never changed afterwards. `rules` is the wire form, one rule per rail and currency.
CREATE TABLE fee_schedule_versions (
  organization_id  text NOT NULL REFERENCES organizations (id),
  version          integer NOT NULL CHECK (version >= 1),
  rules            jsonb NOT NULL CHECK (jsonb_typeof(rules) = 'array'),
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (organization_id, version)
);

CREATE FUNCTION mkoba_fee_schedule_versions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'fee schedule versions are append-only (% refused)', TG_OP USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER fee_schedule_versions_append_only BEFORE UPDATE OR DELETE ON fee_schedule_versions
  FOR EACH ROW EXECUTE FUNCTION mkoba_fee_schedule_versions_append_only();
CREATE TRIGGER fee_schedule_versions_no_truncate BEFORE TRUNCATE ON fee_schedule_versions
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_fee_schedule_versions_append_only();

-- A transfer's fee: charged only by a rule of a stored version, only on money going out. Transfers made
-- before fees, and money arriving, have none (0, no version).
ALTER TABLE transfers
  ADD COLUMN fee_minor bigint NOT NULL DEFAULT 0 CHECK (fee_minor >= 0),
  ADD COLUMN fee_schedule_version integer,
  ADD COLUMN fee_rule text,
  ADD CONSTRAINT transfers_fee_schedule_fkey FOREIGN KEY (organization_id, fee_schedule_version)
    REFERENCES fee_schedule_versions (organization_id, version),
  ADD CONSTRAINT transfers_fee_rule_check CHECK (fee_rule IS NULL OR fee_schedule_version IS NOT NULL),
  ADD CONSTRAINT transfers_fee_decided_check CHECK (fee_minor = 0 OR fee_rule IS NOT NULL),
  ADD CONSTRAINT transfers_fee_outbound_check CHECK (fee_schedule_version IS NULL OR direction = 'outbound');

-- The fee is decided once, when the transfer is created, and its entries carry it: it never changes.
CREATE FUNCTION mkoba_transfer_fee_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the fee of transfer % cannot change', OLD.id USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER transfers_fee_fixed BEFORE UPDATE OF fee_minor, fee_schedule_version, fee_rule ON transfers
  FOR EACH ROW WHEN (
    NEW.fee_minor IS DISTINCT FROM OLD.fee_minor
    OR NEW.fee_schedule_version IS DISTINCT FROM OLD.fee_schedule_version
    OR NEW.fee_rule IS DISTINCT FROM OLD.fee_rule
  )
  EXECUTE FUNCTION mkoba_transfer_fee_fixed();

-- A payment batch decides its items' fees when it is submitted, holds the amounts and the fees, and each
-- item's transfer is charged the fee decided for it.
ALTER TABLE payment_batch_items
  ADD COLUMN fee_minor bigint NOT NULL DEFAULT 0 CHECK (fee_minor >= 0),
  ADD COLUMN fee_schedule_version integer CHECK (fee_schedule_version >= 1),
  ADD COLUMN fee_rule text,
  ADD CONSTRAINT payment_batch_items_fee_rule_check CHECK (fee_rule IS NULL OR fee_schedule_version IS NOT NULL),
  ADD CONSTRAINT payment_batch_items_fee_decided_check CHECK (fee_minor = 0 OR fee_rule IS NOT NULL);
ALTER TABLE payment_batches
  ADD COLUMN fee_total_minor bigint NOT NULL DEFAULT 0 CHECK (fee_total_minor >= 0),
  ADD CONSTRAINT payment_batches_reserved_check CHECK (reserved_minor <= total_minor + fee_total_minor);
