-- Reconciliation: rail settlement statements matched against transfers. A matched transfer's ledger_state
-- becomes `matched`; every difference (an unmatched line, an amount, fee or status that disagrees, a settled
-- transfer the statement leaves out) becomes an exception an operator resolves, never a silent correction.

ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check
  CHECK (kind IN ('wallet', 'rail_settlement', 'rail_clearing', 'payment_batch_reserve',
                  'reconciliation_adjustment', 'rail_fee'));

-- The ledger state machine, enforced as the status machine is.
ALTER TABLE transfers ADD CONSTRAINT transfers_ledger_state_check
  CHECK (ledger_state IN ('pending', 'posted', 'matched', 'exception', 'voided'));

CREATE FUNCTION mkoba_check_ledger_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.ledger_state IS DISTINCT FROM OLD.ledger_state AND NOT (
    (OLD.ledger_state = 'pending' AND NEW.ledger_state IN ('posted', 'voided')) OR
    (OLD.ledger_state = 'posted' AND NEW.ledger_state IN ('matched', 'exception')) OR
    (OLD.ledger_state = 'voided' AND NEW.ledger_state IN ('matched', 'exception')) OR
    (OLD.ledger_state = 'exception' AND NEW.ledger_state = 'matched')
  ) THEN
    RAISE EXCEPTION 'illegal ledger state change % -> % for %', OLD.ledger_state, NEW.ledger_state, OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER transfers_ledger_state_machine BEFORE UPDATE OF ledger_state ON transfers
  FOR EACH ROW EXECUTE FUNCTION mkoba_check_ledger_state();

-- Matching by the rail's reference.
CREATE INDEX transfers_rail_reference_idx ON transfers (organization_id, rail_reference)
  WHERE rail_reference IS NOT NULL;
-- Candidates for matching by amount and date, and settled transfers a statement may leave out.
CREATE INDEX transfers_reconcile_idx ON transfers (organization_id, rail, ledger_state, settled_at);

CREATE TABLE reconciliation_statements (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  rail             text NOT NULL,
  period_from      date NOT NULL,
  period_to        date NOT NULL CHECK (period_to >= period_from),
  content_sha256   text NOT NULL,
  line_count       integer NOT NULL,
  matched_count    integer NOT NULL,
  exception_count  integer NOT NULL,
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL
);
-- The same statement imported twice matches nothing twice.
CREATE UNIQUE INDEX reconciliation_statements_content_idx ON reconciliation_statements (organization_id, content_sha256);
CREATE INDEX reconciliation_statements_organization_idx ON reconciliation_statements (organization_id, id DESC);

CREATE TABLE reconciliation_lines (
  statement_id     text NOT NULL REFERENCES reconciliation_statements (id),
  line             integer NOT NULL,
  rail_reference   text,
  amount_minor     bigint NOT NULL,
  currency         text NOT NULL,
  value_date       date NOT NULL,
  status           text NOT NULL CHECK (status IN ('settled', 'failed')),
  fees_minor       bigint NOT NULL,
  outcome          text NOT NULL CHECK (outcome IN ('matched', 'exception')),
  transfer_ids     text[] NOT NULL,
  PRIMARY KEY (statement_id, line)
);

CREATE TABLE reconciliation_exceptions (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  statement_id     text REFERENCES reconciliation_statements (id),
  line             integer,
  transfer_id      text REFERENCES transfers (id),
  kind             text NOT NULL CHECK (kind IN ('unmatched_line', 'amount_mismatch', 'fee_mismatch',
                                                 'status_mismatch', 'missing_from_statement',
                                                 'unmatched_callback', 'late_callback', 'unmatched_deposit',
                                                 'safeguarding_shortfall')),
  status           text NOT NULL CHECK (status IN ('open', 'resolved')),
  details          jsonb NOT NULL,
  resolution       text CHECK (resolution IN ('manual_match', 'write_off', 'book_fee', 'refund')),
  note             text,
  resolved_by      text,
  journal_entry_id text REFERENCES journal_entries (id),
  created_at       timestamptz NOT NULL,
  resolved_at      timestamptz,
  CHECK ((status = 'open') = (resolved_at IS NULL))
);
CREATE INDEX reconciliation_exceptions_organization_idx ON reconciliation_exceptions (organization_id, id DESC);
CREATE INDEX reconciliation_exceptions_status_idx ON reconciliation_exceptions (organization_id, status, id DESC);
CREATE INDEX reconciliation_exceptions_transfer_idx ON reconciliation_exceptions (transfer_id, status)
  WHERE transfer_id IS NOT NULL;
