/**
 * The event stream's SQL: leasing organizations with events past their cursor, reading those events in
 * commit order, and moving the cursor. Commit order is (writing transaction, event id), read only below
 * pg_snapshot_xmin: every transaction with a smaller id has ended, so nothing can still appear behind a
 * cursor (migration 0078).
 */
import { EVENT_COLUMNS, type EventRecord, eventFromRow } from '../../store/repositories/events.ts';
import type { Queryable } from '../../store/store.ts';
import type { StreamCursor } from './domain.ts';

/** The events a reader may publish: their transaction, and every one before it, has ended. */
const BELOW_HORIZON = 'e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())';
/** After the cursor `c` (a missing cursor is before everything), as an index range. */
const AFTER_CURSOR =
  "(e.transaction_id, e.id) > (COALESCE(c.transaction_id, '0'::xid8), COALESCE(c.event_id, ''))";

export interface LeasedOrganization {
  organizationId: string;
  cursor: StreamCursor;
}

/**
 * Leases up to `limit` organizations that have events to publish and no live lease of another owner, the
 * least recently published first; returns them with their cursors. One statement: two processes racing
 * for one organization queue on its row, and the second sees the first's lease.
 */
export async function leaseOrganizations(
  db: Queryable,
  stream: string,
  owner: string,
  now: Date,
  leaseExpiresAt: Date,
  limit: number,
): Promise<LeasedOrganization[]> {
  const free = '(c.lease_owner IS NULL OR c.lease_expires_at < $3 OR c.lease_owner = $2)';
  const rows = await db.query<{
    organization_id: string;
    transaction_id: string | null;
    event_id: string | null;
  }>(
    `WITH candidates AS (
       SELECT o.id FROM organizations o
         LEFT JOIN event_stream_cursors c ON c.stream = $1 AND c.organization_id = o.id
        WHERE ${free}
          AND EXISTS (SELECT 1 FROM events e WHERE e.organization_id = o.id AND ${AFTER_CURSOR} AND ${BELOW_HORIZON})
        ORDER BY c.published_at NULLS FIRST, o.id LIMIT $5)
     INSERT INTO event_stream_cursors AS c (stream, organization_id, lease_owner, lease_expires_at)
     SELECT $1, id, $2, $4 FROM candidates
     ON CONFLICT (stream, organization_id) DO UPDATE
       SET lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at
       WHERE ${free}
     RETURNING c.organization_id, c.transaction_id::text AS transaction_id, c.event_id`,
    [stream, owner, now, leaseExpiresAt, limit],
  );
  return rows.map((r) => ({
    organizationId: r.organization_id,
    cursor: { transactionId: r.transaction_id ?? undefined, eventId: r.event_id ?? undefined },
  }));
}

export interface StreamEvent {
  event: EventRecord;
  transactionId: string;
}

/** The organization's next events after `cursor`, in commit order, that are safe to publish. */
export async function readEventsAfter(
  db: Queryable,
  organizationId: string,
  cursor: StreamCursor,
  limit: number,
): Promise<StreamEvent[]> {
  const rows = await db.query<Record<string, unknown> & { transaction_text: string }>(
    `SELECT ${EVENT_COLUMNS}, e.transaction_id::text AS transaction_text
       FROM events e, (SELECT $2::xid8 AS transaction_id, $3::text AS event_id) c
      WHERE e.organization_id = $1 AND ${AFTER_CURSOR} AND ${BELOW_HORIZON}
      ORDER BY e.transaction_id, e.id LIMIT $4`,
    [organizationId, cursor.transactionId ?? null, cursor.eventId ?? null, limit],
  );
  return rows.map((row) => ({ event: eventFromRow(row), transactionId: row.transaction_text }));
}

/**
 * Moves the cursor to the last acknowledged event and renews the lease, if `owner` still holds it; false
 * when it does not (it ran out and another process took the organization).
 */
export async function advanceCursor(
  db: Queryable,
  stream: string,
  organizationId: string,
  owner: string,
  to: { transactionId: string; eventId: string; published: number },
  now: Date,
  leaseExpiresAt: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE event_stream_cursors
        SET transaction_id = $4::xid8, event_id = $5, published_count = published_count + $6,
            published_at = $7, lease_expires_at = $8
      WHERE stream = $1 AND organization_id = $2 AND lease_owner = $3 RETURNING 1`,
    [stream, organizationId, owner, to.transactionId, to.eventId, to.published, now, leaseExpiresAt],
  );
  return rows.length === 1;
}

/** Gives the organization back, so any process may take it at once. */
export async function releaseLease(
  db: Queryable,
  stream: string,
  organizationId: string,
  owner: string,
): Promise<void> {
  await db.query(
    `UPDATE event_stream_cursors SET lease_owner = NULL, lease_expires_at = NULL
      WHERE stream = $1 AND organization_id = $2 AND lease_owner = $3`,
    [stream, organizationId, owner],
  );
}
