-- The event stream (docs/EVENT-STREAM.md): every event published to NATS JetStream in commit order per
-- organization. Each event records the transaction that wrote it; the publisher reads only events whose
-- transaction is older than every transaction still running (pg_snapshot_xmin), so no event can still
-- appear before its cursor. Events written before this migration all carry its transaction id (a stable
-- default is stored once, without rewriting the table) and are published first, in id order.
ALTER TABLE events ADD COLUMN transaction_id xid8 DEFAULT pg_current_xact_id();
CREATE INDEX events_stream_order_idx ON events (organization_id, transaction_id, id);

-- Per stream and organization: the last event JetStream acknowledged, and the lease of the process
-- publishing the organization's events (one at a time, so they go out in order).
CREATE TABLE event_stream_cursors (
  stream            text NOT NULL,
  organization_id   text NOT NULL REFERENCES organizations (id),
  transaction_id    xid8,
  event_id          text,
  published_count   bigint NOT NULL DEFAULT 0,
  published_at      timestamptz,
  lease_owner       text,
  lease_expires_at  timestamptz,
  PRIMARY KEY (stream, organization_id)
);
