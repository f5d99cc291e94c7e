-- Retention: events older than MKOBA_RETENTION_DAYS, with their finished webhook deliveries and the
-- deliveries' attempts, are pruned oldest first in bounded batches (src/workers/retentionPruner.ts). The
-- pruner walks events by creation time; the deliveries and attempts of each event are reached through the
-- existing webhook_deliveries_event_idx and the attempts' primary key.
CREATE INDEX events_created_idx ON events (created_at, id);

-- /metrics counts transfers not yet final by status and rail at every scrape: this index holds only those,
-- so the count reads the open transfers and never the settled history.
CREATE INDEX transfers_open_idx ON transfers (status, rail)
  WHERE status IN ('pending_approval', 'in_review', 'pending', 'processing');
