-- Safeguarding: the trust accounts at partner banks that hold an organization's customer money, the closing
-- balances their statements report per day, and the daily report comparing them with the customer wallet
-- balances the ledger holds. A shortfall opens a reconciliation exception of the kind
-- `safeguarding_shortfall` (listed with the other kinds in 0022).

CREATE TABLE trust_accounts (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations (id),
  currency           text NOT NULL,
  bank               text NOT NULL,
  account_reference  text NOT NULL,
  status             text NOT NULL CHECK (status IN ('active', 'closed')),
  active_from        date NOT NULL,
  closed_on          date,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  CHECK ((status = 'closed') = (closed_on IS NOT NULL))
);
-- One active account per bank and reference in an organization.
CREATE UNIQUE INDEX trust_accounts_reference_idx ON trust_accounts (organization_id, bank, account_reference)
  WHERE status = 'active';
-- The list, newest first; and the accounts of one currency, locked together by every balance and check.
CREATE INDEX trust_accounts_organization_idx ON trust_accounts (organization_id, id DESC);
CREATE INDEX trust_accounts_currency_idx ON trust_accounts (organization_id, currency, id);

CREATE TABLE safeguarding_balances (
  id                     text PRIMARY KEY,
  organization_id        text NOT NULL REFERENCES organizations (id),
  trust_account_id       text NOT NULL REFERENCES trust_accounts (id),
  currency               text NOT NULL,
  balance_date           date NOT NULL,
  closing_balance_minor  bigint NOT NULL,
  status                 text NOT NULL CHECK (status IN ('current', 'superseded')),
  replaces_id            text REFERENCES safeguarding_balances (id),
  note                   text,
  created_by             text NOT NULL,
  created_at             timestamptz NOT NULL
);
-- One current figure per account and day; a correction supersedes it.
CREATE UNIQUE INDEX safeguarding_balances_current_idx ON safeguarding_balances (trust_account_id, balance_date)
  WHERE status = 'current';
CREATE INDEX safeguarding_balances_organization_idx ON safeguarding_balances (organization_id, id DESC);
CREATE INDEX safeguarding_balances_account_idx ON safeguarding_balances (trust_account_id, id DESC);

CREATE TABLE safeguarding_reports (
  id                    text PRIMARY KEY,
  organization_id       text NOT NULL REFERENCES organizations (id),
  currency              text NOT NULL,
  report_date           date NOT NULL,
  status                text NOT NULL CHECK (status IN ('ok', 'shortfall', 'excess', 'missing_balance')),
  customer_money_minor  bigint NOT NULL,
  trust_balance_minor   bigint,
  difference_minor      bigint,
  -- Each trust account that counted that day, with the balance used (or null: not reported).
  trust_balances        jsonb NOT NULL,
  as_of                 timestamptz NOT NULL,
  exception_id          text REFERENCES reconciliation_exceptions (id),
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL,
  CHECK ((status = 'missing_balance') = (trust_balance_minor IS NULL))
);
-- One report per organization, currency and day (the check's idempotency); its days, for the check's
-- look-back and the list's date range.
CREATE UNIQUE INDEX safeguarding_reports_day_idx ON safeguarding_reports (organization_id, report_date, currency);
CREATE INDEX safeguarding_reports_organization_idx ON safeguarding_reports (organization_id, id DESC);
CREATE INDEX safeguarding_reports_currency_idx ON safeguarding_reports (organization_id, currency, id DESC);
CREATE INDEX safeguarding_reports_status_idx ON safeguarding_reports (organization_id, status, id DESC);

-- Customer money of a currency: the organization's wallet accounts in it (their sums, and the first one's
-- creation, which tells whether the currency had wallets on a day).
CREATE INDEX ledger_accounts_wallet_currency_idx ON ledger_accounts (organization_id, currency, created_at)
  WHERE kind = 'wallet';
