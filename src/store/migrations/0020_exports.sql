-- Exports: asynchronous jobs that stream an organization's history (transfers, ledger entries, events,
-- evidence) to a file, CSV or JSON lines, which is then downloaded. The file lives in the export directory;
-- the row records its size and SHA-256, and the job's progress.

CREATE TABLE exports (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  type             text NOT NULL CHECK (type IN ('transfers', 'ledger_entries', 'events', 'evidence',
                                                 'reconciliation_exceptions')),
  format           text NOT NULL CHECK (format IN ('csv', 'jsonl')),
  created_from     timestamptz,
  created_to       timestamptz,
  status           text NOT NULL CHECK (status IN ('queued', 'running', 'ready', 'failed', 'expired')),
  rows_written     bigint NOT NULL DEFAULT 0,
  rows_estimated   bigint,
  bytes            bigint,
  sha256           text,
  file_name        text,
  error            text,
  created_by       text NOT NULL,
  lease_until      timestamptz,
  created_at       timestamptz NOT NULL,
  started_at       timestamptz,
  finished_at      timestamptz,
  expires_at       timestamptz
);
CREATE INDEX exports_organization_idx ON exports (organization_id, id DESC);
CREATE INDEX exports_queue_idx ON exports (created_at) WHERE status IN ('queued', 'running');
CREATE INDEX exports_expiry_idx ON exports (expires_at) WHERE status = 'ready';
