-- Evidence: compliance decisions, append-only and hash-chained per organization. The payload is the exact
-- canonical text that was hashed; the other columns are copies of its fields, kept for lookups.

CREATE TABLE evidence_records (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  sequence         bigint NOT NULL CHECK (sequence >= 1),
  kind             text NOT NULL,
  transfer_id      text,
  customer_id      text,
  wallet_id        text,
  created_at       timestamptz NOT NULL,
  previous_hash    text NOT NULL CHECK (previous_hash ~ '^[0-9a-f]{64}$'),
  payload          text NOT NULL,
  hash             text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  -- One record per place in the chain, and one successor per record: the chain cannot fork.
  UNIQUE (organization_id, sequence),
  UNIQUE (organization_id, previous_hash)
);
CREATE INDEX evidence_records_transfer_idx ON evidence_records (organization_id, transfer_id, sequence DESC)
  WHERE transfer_id IS NOT NULL;
CREATE INDEX evidence_records_customer_idx ON evidence_records (organization_id, customer_id, sequence DESC)
  WHERE customer_id IS NOT NULL;
CREATE INDEX evidence_records_kind_idx ON evidence_records (organization_id, kind, sequence DESC);
CREATE INDEX evidence_records_wallet_idx ON evidence_records (organization_id, wallet_id, sequence DESC)
  WHERE wallet_id IS NOT NULL;

CREATE TRIGGER evidence_records_append_only BEFORE UPDATE OR DELETE ON evidence_records
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();
CREATE TRIGGER evidence_records_no_truncate BEFORE TRUNCATE ON evidence_records
  FOR EACH STATEMENT EXECUTE FUNCTION mkoba_refuse_change();

-- Each record links to the record before it: the first to the genesis hash, every other to its
-- predecessor's hash. Checked after the statement's rows are all in, so a batch may be inserted in any order.
CREATE FUNCTION mkoba_evidence_link_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.sequence = 1 THEN
    IF NEW.previous_hash <> repeat('0', 64) THEN
      RAISE EXCEPTION 'evidence % is first in its chain but does not start from the genesis hash', NEW.id;
    END IF;
  ELSIF NOT EXISTS (
    SELECT 1 FROM evidence_records
     WHERE organization_id = NEW.organization_id AND sequence = NEW.sequence - 1 AND hash = NEW.previous_hash
  ) THEN
    RAISE EXCEPTION 'evidence % does not link to record % of its chain', NEW.id, NEW.sequence - 1;
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER evidence_records_linked AFTER INSERT ON evidence_records
  FOR EACH ROW EXECUTE FUNCTION mkoba_evidence_link_check();

-- Where each organization's chain stands. Appending takes this row's lock, so concurrent appends queue
-- instead of forking; one row per organization, written in the transaction that appends.
CREATE TABLE evidence_chain_heads (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  sequence         bigint NOT NULL CHECK (sequence >= 0),
  hash             text NOT NULL
);
