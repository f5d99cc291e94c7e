-- The transfer status machine, enforced by the database as well: the use cases move transfers only through
-- the domain's transition function, and this trigger refuses any other status change, whoever writes it.
-- The table mirrors TRANSFER_TRANSITIONS in src/domain/transfers.ts (a test keeps the two equal).

CREATE TABLE transfer_status_transitions (
  from_status  text NOT NULL,
  to_status    text NOT NULL,
  PRIMARY KEY (from_status, to_status)
);

INSERT INTO transfer_status_transitions (from_status, to_status) VALUES
  ('pending_approval', 'pending'), ('pending_approval', 'processing'), ('pending_approval', 'rejected'),
  ('pending_approval', 'expired'), ('pending_approval', 'canceled'),
  ('in_review', 'pending'), ('in_review', 'processing'), ('in_review', 'rejected'),
  ('pending', 'processing'), ('pending', 'settled'), ('pending', 'failed'), ('pending', 'canceled'),
  ('processing', 'settled'), ('processing', 'failed'),
  ('settled', 'returned');

CREATE FUNCTION mkoba_check_transfer_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status IS DISTINCT FROM OLD.status AND NOT EXISTS (
    SELECT 1 FROM transfer_status_transitions WHERE from_status = OLD.status AND to_status = NEW.status
  ) THEN
    RAISE EXCEPTION 'illegal transfer status change % -> % for %', OLD.status, NEW.status, OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER transfers_status_machine BEFORE UPDATE OF status ON transfers
  FOR EACH ROW EXECUTE FUNCTION mkoba_check_transfer_transition();
