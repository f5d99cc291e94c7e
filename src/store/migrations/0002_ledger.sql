-- Double-entry ledger, transfers and the event outbox.
-- Wallet balances move from the wallets table to the wallet's ledger account (same id as the wallet).

ALTER TABLE wallets DROP CONSTRAINT IF EXISTS wallets_check;
ALTER TABLE wallets DROP CONSTRAINT IF EXISTS wallets_pending_minor_check;
ALTER TABLE wallets DROP COLUMN available_minor;
ALTER TABLE wallets DROP COLUMN pending_minor;
ALTER TABLE wallets DROP COLUMN current_minor;

-- TigerBeetle-style accounts: four running sums, each only ever changed together with the postings that
-- justify it. A wallet's current balance is credits_posted - debits_posted; pending is debits_pending
-- (held for outgoing transfers); available is current - pending.
CREATE TABLE ledger_accounts (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  kind             text NOT NULL CHECK (kind IN ('wallet', 'rail_settlement', 'rail_clearing')),
  wallet_id        text UNIQUE REFERENCES wallets (id),
  rail             text,
  currency         text NOT NULL,
  debits_pending   bigint NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
  debits_posted    bigint NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
  credits_pending  bigint NOT NULL DEFAULT 0 CHECK (credits_pending >= 0),
  credits_posted   bigint NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  CHECK ((kind = 'wallet') = (wallet_id IS NOT NULL)),
  CHECK (kind = 'wallet' OR rail IS NOT NULL)
);
CREATE UNIQUE INDEX ledger_accounts_system_idx ON ledger_accounts (organization_id, kind, rail, currency)
  WHERE kind <> 'wallet';
CREATE INDEX ledger_accounts_organization_idx ON ledger_accounts (organization_id, id);

INSERT INTO ledger_accounts (id, organization_id, kind, wallet_id, currency, created_at, updated_at)
  SELECT id, organization_id, 'wallet', id, currency, created_at, updated_at FROM wallets;

CREATE TABLE transfers (
  id                     text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id),
  direction              text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  source_wallet_id       text REFERENCES wallets (id),
  destination            jsonb NOT NULL,
  destination_wallet_id  text REFERENCES wallets (id),
  amount_minor           bigint NOT NULL CHECK (amount_minor > 0),
  currency               text NOT NULL,
  rail                   text NOT NULL,
  network                text,
  status                 text NOT NULL,
  status_reason          text,
  failure_code           text,
  ledger_state           text NOT NULL,
  metadata               jsonb NOT NULL DEFAULT '{}',
  rail_reference         text,
  next_rail_check_at     timestamptz,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL,
  processing_at          timestamptz,
  settled_at             timestamptz,
  failed_at              timestamptz,
  canceled_at            timestamptz,
  returned_at            timestamptz
);
CREATE INDEX transfers_organization_idx ON transfers (organization_id, id DESC);
CREATE INDEX transfers_source_idx ON transfers (organization_id, source_wallet_id, id DESC);
CREATE INDEX transfers_destination_idx ON transfers (organization_id, destination_wallet_id, id DESC);
-- The rail worker's queue: only transfers waiting on a rail are indexed.
CREATE INDEX transfers_rail_queue_idx ON transfers (next_rail_check_at) WHERE next_rail_check_at IS NOT NULL;

CREATE TABLE journal_entries (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  transfer_id      text REFERENCES transfers (id),
  kind             text NOT NULL CHECK (kind IN ('hold', 'post', 'void', 'direct', 'reversal')),
  -- For post and void: the hold they settle or release.
  hold_entry_id    text REFERENCES journal_entries (id),
  created_at       timestamptz NOT NULL
);
CREATE INDEX journal_entries_transfer_idx ON journal_entries (transfer_id);
CREATE INDEX journal_entries_organization_idx ON journal_entries (organization_id, id DESC);

-- A posting moves amount_minor on one side of one account. phase: 'pending' adds to the side's pending
-- sum; 'posted' adds to its posted sum (and, with releases_hold, takes the same amount off its pending
-- sum); 'voided' takes the amount off its pending sum.
CREATE TABLE postings (
  entry_id       text NOT NULL REFERENCES journal_entries (id),
  line           integer NOT NULL,
  account_id     text NOT NULL REFERENCES ledger_accounts (id),
  side           text NOT NULL CHECK (side IN ('debit', 'credit')),
  phase          text NOT NULL CHECK (phase IN ('pending', 'posted', 'voided')),
  releases_hold  boolean NOT NULL DEFAULT false,
  amount_minor   bigint NOT NULL CHECK (amount_minor > 0),
  currency       text NOT NULL,
  PRIMARY KEY (entry_id, line)
);
CREATE INDEX postings_account_idx ON postings (account_id);

-- Entries are append-only: nothing may change or remove them once written.
CREATE FUNCTION mkoba_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'append-only table %: % refused', TG_TABLE_NAME, TG_OP;
END;
$$;
CREATE TRIGGER journal_entries_append_only BEFORE UPDATE OR DELETE ON journal_entries
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();
CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
  FOR EACH ROW EXECUTE FUNCTION mkoba_refuse_change();

-- The outbox: one row per state change, written in the transaction that made the change.
CREATE TABLE events (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  type             text NOT NULL,
  resource_id      text,
  data             jsonb NOT NULL,
  created_at       timestamptz NOT NULL
);
CREATE INDEX events_organization_idx ON events (organization_id, id DESC);
CREATE INDEX events_type_idx ON events (organization_id, type, id DESC);
CREATE INDEX events_resource_idx ON events (resource_id);
