-- Network fees a custody partner reports paid for a transaction of ours (a digital_asset payout, a custody
-- sweep), once per partner transaction: the unique index is what makes a repeated or late webhook and a poll
-- racing it book one fee. A fee in a ledger currency is booked through the posting module (`journal_entry_id`);
-- one in an asset the ledger holds no account for (the network's native coin, which pays a token transfer's
-- gas) opens an `unbooked_network_fee` reconciliation exception (`exception_id`): never dropped.
CREATE TABLE IF NOT EXISTS custody_network_fees (
  id                      text PRIMARY KEY,
  organization_id         text NOT NULL REFERENCES organizations (id),
  partner                 text NOT NULL,
  partner_transaction_id  text NOT NULL,
  subject_type            text NOT NULL CHECK (subject_type IN ('payout', 'sweep')),
  subject_id              text NOT NULL,
  fee_asset               text NOT NULL,
  fee_amount              text NOT NULL,
  currency                text,
  amount_minor            bigint CHECK (amount_minor > 0),
  journal_entry_id        text REFERENCES journal_entries (id),
  exception_id            text REFERENCES reconciliation_exceptions (id),
  created_at              timestamptz NOT NULL,
  CHECK ((journal_entry_id IS NULL) <> (exception_id IS NULL)),
  CHECK ((currency IS NULL) = (amount_minor IS NULL))
);
CREATE UNIQUE INDEX IF NOT EXISTS custody_network_fees_transaction_idx
  ON custody_network_fees (organization_id, partner, partner_transaction_id);
CREATE INDEX IF NOT EXISTS custody_network_fees_subject_idx ON custody_network_fees (subject_id);

-- The new exception kind, widened from the check as it is now (other branches add kinds too).
DO $$
DECLARE
  current_check text;
BEGIN
  SELECT pg_get_constraintdef(c.oid) INTO current_check
    FROM pg_constraint c
   WHERE c.conrelid = 'reconciliation_exceptions'::regclass AND c.conname = 'reconciliation_exceptions_kind_check';
  IF position('unbooked_network_fee' IN current_check) = 0 THEN
    ALTER TABLE reconciliation_exceptions DROP CONSTRAINT reconciliation_exceptions_kind_check;
    EXECUTE format(
      'ALTER TABLE reconciliation_exceptions ADD CONSTRAINT reconciliation_exceptions_kind_check CHECK ((%s) OR kind = %L)',
      substring(current_check FROM '^CHECK \((.*)\)$'),
      'unbooked_network_fee'
    );
  END IF;
END;
$$;
