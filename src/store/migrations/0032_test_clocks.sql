-- Test clocks: in the sandbox an organization's clock may run ahead of the real one, so that a month of
-- interest accrual, due dates and arrears can be tested in seconds. One row per organization whose clock was
-- ever advanced; its offset only grows (docs/PRODUCTS.md, "Test clock").
CREATE TABLE test_clocks (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  offset_ms        bigint NOT NULL CHECK (offset_ms > 0),
  advances         integer NOT NULL CHECK (advances >= 1),
  advanced_at      timestamptz NOT NULL,
  created_at       timestamptz NOT NULL
);

CREATE FUNCTION mkoba_test_clocks_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.offset_ms < OLD.offset_ms THEN
    RAISE EXCEPTION 'a test clock never goes back (offset % ms to % ms refused)', OLD.offset_ms, NEW.offset_ms
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER test_clocks_forward_only BEFORE UPDATE ON test_clocks
  FOR EACH ROW EXECUTE FUNCTION mkoba_test_clocks_forward_only();
CREATE FUNCTION mkoba_test_clocks_no_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'test clocks are never removed (% refused)', TG_OP USING ERRCODE = 'check_violation';
END;
$$;
CREATE TRIGGER test_clocks_no_delete BEFORE DELETE ON test_clocks
  FOR EACH ROW EXECUTE FUNCTION mkoba_test_clocks_no_delete();
