-- Digital accounts: the sponsor bank an organization issues account numbers under, and the account details a
-- wallet carries so that outsiders can pay into it (an account number with an ISO/IEC 7064 MOD 11-2 check
-- digit, the bank code and name it was issued under; the virtual reference stays in wallet_virtual_accounts).

-- The organization's setting: one row, replaced by an admin. Wallets get account numbers only once it exists.
CREATE TABLE digital_account_settings (
  organization_id  text PRIMARY KEY REFERENCES organizations (id),
  bank_code        text NOT NULL CHECK (bank_code ~ '^[A-Z0-9]{2,11}$'),
  bank_name        text NOT NULL CHECK (length(bank_name) BETWEEN 1 AND 140),
  updated_at       timestamptz NOT NULL
);

-- ISO/IEC 7064 MOD 11-2 (pure system): whether the last character of a string of digits is the check digit of
-- the others (a check of ten, written X, never is: such numbers are not issued). The same rule as
-- src/domain/digitalAccounts.ts, so a number the code did not make is refused.
CREATE FUNCTION mkoba_iso7064_mod11_2_valid(digits text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  product integer := 0;
BEGIN
  IF digits !~ '^[0-9]{2,}$' THEN
    RETURN false;
  END IF;
  FOR i IN 1 .. length(digits) - 1 LOOP
    product := ((product + substr(digits, i, 1)::integer) * 2) % 11;
  END LOOP;
  RETURN (12 - product) % 11 = substr(digits, length(digits), 1)::integer;
END;
$$;

-- A wallet's account details, issued once: never changed, never removed, so a number is never reused.
CREATE TABLE wallet_account_details (
  wallet_id        text PRIMARY KEY REFERENCES wallets (id),
  organization_id  text NOT NULL REFERENCES organizations (id),
  account_number   text NOT NULL CHECK (
    account_number ~ '^[1-9][0-9]{11}$' AND mkoba_iso7064_mod11_2_valid(account_number)
  ),
  bank_code        text NOT NULL CHECK (bank_code ~ '^[A-Z0-9]{2,11}$'),
  bank_name        text NOT NULL,
  created_at       timestamptz NOT NULL
);
-- Unique per organization (what a bank deposit is matched by), and per bank code, so two organizations issuing
-- under the same sponsor bank never hand out the same coordinates.
CREATE UNIQUE INDEX wallet_account_details_number_idx ON wallet_account_details (organization_id, account_number);
CREATE UNIQUE INDEX wallet_account_details_bank_idx ON wallet_account_details (bank_code, account_number);
CREATE TRIGGER wallet_account_details_append_only BEFORE UPDATE OR DELETE ON wallet_account_details
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- Balances as of an instant and statements sum a wallet account's postings since an instant: the index they
-- are read from now carries each posting's side, phase, amount and release flag, so the sums are index-only
-- (the entries' created_at is read only around the instant). Same keys as the index it replaces (0008), so
-- the wallet's entry list keeps its plan.
DROP INDEX postings_account_entry_idx;
CREATE INDEX postings_account_entry_idx ON postings (account_id, entry_id DESC)
  INCLUDE (side, phase, releases_hold, amount_minor);
