-- Indexes for the history lists and the webhook claim: each list reads about a page of rows whatever the
-- history's size (docs/BENCHMARKS.md, "Explain", has the plans before and after).

-- Transfers by status, newest first.
CREATE INDEX transfers_status_idx ON transfers (organization_id, status, id DESC);

-- (The post or void of a hold, which the settle and fail path looks for, is served by the unique index of
-- migration 0006, journal_entries_hold_released_once_idx.)

-- A wallet's entries newest first, from its account's postings alone. Supersedes the index on account_id.
CREATE INDEX postings_account_entry_idx ON postings (account_id, entry_id DESC);
DROP INDEX postings_account_idx;

-- The dispatcher's claim, per enabled subscription: its oldest due pending deliveries, and its leases (live
-- ones count against its in-flight limit, run-out ones are taken back). Supersedes the index on
-- next_attempt_at, which made every tick read the whole backlog.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (subscription_id, next_attempt_at, id)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (subscription_id, lease_expires_at)
  WHERE status = 'delivering';
DROP INDEX webhook_deliveries_due_idx;
