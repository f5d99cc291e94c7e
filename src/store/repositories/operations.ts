/** Scrape-time figures for /metrics: each read is served by an index and bounded whatever the history. */
import type { Queryable } from '../store.ts';

/** The statuses a transfer leaves again: the partial index transfers_open_idx holds only these. */
export const OPEN_TRANSFER_STATUSES = ['pending_approval', 'in_review', 'pending', 'processing'] as const;

export interface OpenTransferCount {
  status: string;
  rail: string;
  count: number;
}

/** Transfers not yet final, by status and rail (from transfers_open_idx alone). */
export async function openTransferCounts(db: Queryable): Promise<OpenTransferCount[]> {
  const rows = await db.query<{ status: string; rail: string; count: number }>(
    `SELECT status, rail, count(*)::int AS count FROM transfers
      WHERE status IN ('pending_approval', 'in_review', 'pending', 'processing')
      GROUP BY status, rail`,
  );
  return rows;
}

export interface SubscriptionQueue {
  subscriptionId: string;
  /** Pending deliveries, counted up to the cap the caller gave. */
  depth: number;
  /** The earliest next_attempt_at among its pending deliveries already due; undefined when none is due. */
  oldestDueAt: Date | undefined;
}

/**
 * Per live subscription with pending deliveries: their number (up to depthCountMax) and the oldest due
 * one. One probe per subscription into webhook_deliveries_pending_idx, reading at most depthCountMax
 * entries each (an index-only scan), so a large backlog cannot make a scrape slow.
 */
export async function subscriptionQueues(
  db: Queryable,
  now: Date,
  depthCountMax: number,
): Promise<SubscriptionQueue[]> {
  const rows = await db.query<{ id: string; depth: number; oldest_due_at: Date | string | null }>(
    `SELECT s.id, q.depth, q.oldest_due_at
       FROM webhook_subscriptions s
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS depth, min(p.next_attempt_at) FILTER (WHERE p.next_attempt_at <= $1) AS oldest_due_at
          FROM (SELECT d.next_attempt_at FROM webhook_deliveries d
                 WHERE d.subscription_id = s.id AND d.status = 'pending'
                 ORDER BY d.next_attempt_at LIMIT $2) p
      ) q
      WHERE s.deleted_at IS NULL AND q.depth > 0`,
    [now, depthCountMax],
  );
  return rows.map((r) => ({
    subscriptionId: r.id,
    depth: r.depth,
    oldestDueAt: r.oldest_due_at === null ? undefined : new Date(r.oldest_due_at),
  }));
}

/**
 * When the oldest event the stream has not acknowledged was written, over every organization; undefined
 * when none waits. One probe per organization into events_stream_order_idx, from its cursor.
 */
export async function oldestUnpublishedEventAt(db: Queryable, stream: string): Promise<Date | undefined> {
  const rows = await db.query<{ oldest: Date | string | null }>(
    `SELECT min(p.created_at) AS oldest
       FROM organizations o
       LEFT JOIN event_stream_cursors c ON c.stream = $1 AND c.organization_id = o.id
      CROSS JOIN LATERAL (
        SELECT e.created_at FROM events e
         WHERE e.organization_id = o.id
           AND (e.transaction_id, e.id) > (COALESCE(c.transaction_id, '0'::xid8), COALESCE(c.event_id, ''))
         ORDER BY e.transaction_id, e.id LIMIT 1) p`,
    [stream],
  );
  const oldest = rows[0]?.oldest;
  return oldest === null || oldest === undefined ? undefined : new Date(oldest);
}
