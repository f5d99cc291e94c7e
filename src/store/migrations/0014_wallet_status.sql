-- Wallet freezes and closing. The status machine is enforced by the database as well (the table mirrors
-- WALLET_STATUS_TRANSITIONS in src/domain/wallets.ts; a test keeps the two equal), and each wallet's status
-- is copied onto its ledger account, so the posting module reads it from the very row it locks: a freeze or
-- close that commits while a batch waits for that lock is seen by the batch.

ALTER TABLE wallets ADD COLUMN status_reason text;
ALTER TABLE wallets ADD COLUMN status_changed_at timestamptz;

CREATE TABLE wallet_status_transitions (
  from_status  text NOT NULL,
  to_status    text NOT NULL,
  PRIMARY KEY (from_status, to_status)
);
INSERT INTO wallet_status_transitions (from_status, to_status) VALUES
  ('active', 'frozen'), ('frozen', 'active'), ('active', 'closed');

CREATE FUNCTION mkoba_check_wallet_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
    SELECT 1 FROM wallet_status_transitions WHERE from_status = OLD.status AND to_status = NEW.status
  ) THEN
    RAISE EXCEPTION 'illegal wallet status change % -> % for %', OLD.status, NEW.status, OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER wallets_status_machine BEFORE UPDATE OF status ON wallets
  FOR EACH ROW EXECUTE FUNCTION mkoba_check_wallet_transition();

ALTER TABLE ledger_accounts ADD COLUMN wallet_status text;
UPDATE ledger_accounts a SET wallet_status = w.status FROM wallets w WHERE w.id = a.wallet_id;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_wallet_status_check
  CHECK ((kind = 'wallet') = (wallet_status IS NOT NULL));

-- A wallet's account is created after the wallet: it starts with the wallet's status.
CREATE FUNCTION mkoba_fill_wallet_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT status INTO NEW.wallet_status FROM wallets WHERE id = NEW.wallet_id;
  RETURN NEW;
END;
$$;
CREATE TRIGGER ledger_accounts_wallet_status BEFORE INSERT ON ledger_accounts
  FOR EACH ROW WHEN (NEW.kind = 'wallet' AND NEW.wallet_status IS NULL)
  EXECUTE FUNCTION mkoba_fill_wallet_status();

CREATE FUNCTION mkoba_copy_wallet_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ledger_accounts SET wallet_status = NEW.status WHERE id = NEW.id;
  RETURN NULL;
END;
$$;
CREATE TRIGGER wallets_status_to_account AFTER UPDATE OF status ON wallets
  FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status) EXECUTE FUNCTION mkoba_copy_wallet_status();

-- A closed wallet holds nothing: its ledger account is at zero with nothing pending.
CREATE FUNCTION mkoba_check_wallet_closed_empty() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'closed' AND EXISTS (
    SELECT 1 FROM ledger_accounts
     WHERE id = NEW.id
       AND (credits_posted <> debits_posted OR debits_pending <> 0 OR credits_pending <> 0)
  ) THEN
    RAISE EXCEPTION 'wallet % cannot close with a balance or pending amounts', NEW.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER wallets_closed_empty AFTER UPDATE OF status ON wallets
  FOR EACH ROW WHEN (NEW.status = 'closed') EXECUTE FUNCTION mkoba_check_wallet_closed_empty();
