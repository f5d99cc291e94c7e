-- The database enforces what the posting module assumes, whoever writes.

-- A hold is made final or released at most once. Also serves the open-hold lookup of every settle, fail and
-- cancel, which otherwise scanned the whole journal.
CREATE UNIQUE INDEX journal_entries_hold_released_once_idx ON journal_entries (hold_entry_id)
  WHERE hold_entry_id IS NOT NULL;

-- Every posting is in its entry's currency and in its account's currency. The composite keys replace the
-- single-column foreign keys, so each posting still costs two key checks.
ALTER TABLE journal_entries ADD COLUMN currency text;
ALTER TABLE journal_entries DISABLE TRIGGER journal_entries_append_only;
UPDATE journal_entries e SET currency = p.currency
  FROM (SELECT entry_id, min(currency) AS currency FROM postings GROUP BY entry_id) p
 WHERE p.entry_id = e.id;
ALTER TABLE journal_entries ENABLE TRIGGER journal_entries_append_only;
ALTER TABLE journal_entries ALTER COLUMN currency SET NOT NULL;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_id_currency_key UNIQUE (id, currency);
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_id_currency_key UNIQUE (id, currency);
ALTER TABLE postings DROP CONSTRAINT postings_entry_id_fkey;
ALTER TABLE postings DROP CONSTRAINT postings_account_id_fkey;
ALTER TABLE postings ADD CONSTRAINT postings_entry_currency_fkey
  FOREIGN KEY (entry_id, currency) REFERENCES journal_entries (id, currency);
ALTER TABLE postings ADD CONSTRAINT postings_account_currency_fkey
  FOREIGN KEY (account_id, currency) REFERENCES ledger_accounts (id, currency);

-- A wallet's available balance (credits posted - debits posted - debits pending) never goes below minus
-- its overdraft limit, which is 0 until a product allows one. Computed in numeric so that the check
-- itself cannot overflow.
ALTER TABLE ledger_accounts ADD COLUMN overdraft_limit_minor bigint NOT NULL DEFAULT 0
  CHECK (overdraft_limit_minor >= 0);
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_wallet_floor_check CHECK (
  kind <> 'wallet'
  OR credits_posted::numeric - debits_posted - debits_pending + overdraft_limit_minor >= 0
);

-- Idempotent responses are kept as the exact bytes sent, so a replay is byte-identical (key order and
-- errors[] included). Records written before this carried a JSON body, or {"error": {...}} for a failure:
-- they are carried over in the problem format.
ALTER TABLE idempotency_records ADD COLUMN response_text text;
UPDATE idempotency_records SET response_text = CASE
  WHEN response_body ? 'error' AND jsonb_typeof(response_body -> 'error') = 'object' THEN
    jsonb_strip_nulls(jsonb_build_object(
      'type', 'urn:mkoba:error:' || (response_body #>> '{error,code}'),
      'title', response_body #> '{error,title}',
      'status', response_status,
      'detail', response_body #> '{error,detail}',
      'code', response_body #> '{error,code}',
      'param', response_body #> '{error,param}',
      'errors', COALESCE(response_body #> '{error,errors}', '[]'::jsonb)
    ))::text
  ELSE response_body::text
END;
ALTER TABLE idempotency_records ALTER COLUMN response_text SET NOT NULL;
ALTER TABLE idempotency_records DROP COLUMN response_body;
