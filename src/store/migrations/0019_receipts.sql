-- Receipts of settled transfers: a verification code issued once per transfer, naming the journal entry that
-- made it final. Anyone holding a receipt can check its code; a receipt, once issued, never changes.

CREATE TABLE receipts (
  code             text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  transfer_id      text NOT NULL UNIQUE REFERENCES transfers (id),
  entry_id         text NOT NULL REFERENCES journal_entries (id),
  issued_at        timestamptz NOT NULL
);

CREATE FUNCTION mkoba_receipts_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'receipts are append-only (% refused)', TG_OP USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER receipts_append_only BEFORE UPDATE OR DELETE ON receipts
  FOR EACH ROW EXECUTE FUNCTION mkoba_receipts_append_only();
