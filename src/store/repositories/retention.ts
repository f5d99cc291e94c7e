/** Pruning of events, their webhook deliveries and attempt logs past the retention period. */
import type { Queryable } from '../store.ts';

/** Where a pruning run has got to: the last event it examined, in (created_at, id) order. */
export interface PruneCursor {
  /** As the database wrote it (text keeps the microseconds a Date would drop). */
  createdAt: string;
  id: string;
}

export interface PruneBatchResult {
  /** Events examined: fewer than asked means the run has reached the cutoff. */
  examined: number;
  events: number;
  deliveries: number;
  attempts: number;
  /** The last event examined, for the next batch; undefined when none was. */
  cursor: PruneCursor | undefined;
}

type DeliveryRow = {
  id: string;
  event_id: string;
  status: string;
  last_activity_at: Date | string;
};

/**
 * One batch, to be run in a transaction: the next eventsMax events created before `cutoff` (after `after`,
 * oldest first; events another transaction holds are skipped), and of those, deletes each whose deliveries
 * are all finished (succeeded or exhausted) and were last attempted before `cutoff`, with those deliveries
 * and their attempts. The deliveries are locked before they are judged, so a redelivery or recover racing
 * the pruner either waits for it or is waited for; an event with a pending or delivering delivery stays.
 * They are locked in (subscription, delivery) order, the order a batch of outcomes and a requeue lock them in.
 * With an event `stream` published to, an event its organization's cursor has not passed stays too: retention
 * never takes an event from the stream before JetStream acknowledged it (docs/EVENT-STREAM.md).
 */
export async function pruneEventsBatch(
  tx: Queryable,
  cutoff: Date,
  after: PruneCursor | undefined,
  eventsMax: number,
  stream?: string,
): Promise<PruneBatchResult> {
  const params: unknown[] = [cutoff, eventsMax];
  let keyset = '';
  if (after) {
    params.push(after.createdAt, after.id);
    keyset = 'AND (created_at, id) > ($3::timestamptz, $4)';
  }
  // The text alias must not shadow created_at in ORDER BY, or the sort is by text and skips the index.
  const candidates = await tx.query<{ id: string; created_at_text: string }>(
    `SELECT id, created_at::text AS created_at_text FROM events WHERE created_at < $1 ${keyset}
      ORDER BY events.created_at, events.id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    params,
  );
  const last = candidates.at(-1);
  const result: PruneBatchResult = {
    examined: candidates.length,
    events: 0,
    deliveries: 0,
    attempts: 0,
    cursor: last && { createdAt: last.created_at_text, id: last.id },
  };
  if (candidates.length === 0) return result;
  const eventIds = candidates.map((c) => c.id);
  const deliveries = await tx.query<DeliveryRow>(
    `SELECT id, event_id, status, COALESCE(last_attempt_at, created_at) AS last_activity_at
       FROM webhook_deliveries WHERE event_id = ANY($1) ORDER BY subscription_id, id FOR UPDATE`,
    [eventIds],
  );
  const kept = new Set<string>();
  for (const d of deliveries) {
    const finished = d.status === 'succeeded' || d.status === 'exhausted';
    if (!finished || new Date(d.last_activity_at) >= cutoff) kept.add(d.event_id);
  }
  if (stream !== undefined) {
    const unpublished = await tx.query<{ id: string }>(
      `SELECT e.id FROM events e
         LEFT JOIN event_stream_cursors c ON c.stream = $2 AND c.organization_id = e.organization_id
        WHERE e.id = ANY($1)
          AND (e.transaction_id, e.id) > (COALESCE(c.transaction_id, '0'::xid8), COALESCE(c.event_id, ''))`,
      [eventIds, stream],
    );
    for (const e of unpublished) kept.add(e.id);
  }
  const prunable = eventIds.filter((id) => !kept.has(id));
  if (prunable.length === 0) return result;
  const deliveryIds = deliveries.filter((d) => !kept.has(d.event_id)).map((d) => d.id);
  if (deliveryIds.length > 0) {
    const attempts = await tx.query('DELETE FROM webhook_attempts WHERE delivery_id = ANY($1) RETURNING 1', [
      deliveryIds,
    ]);
    const removed = await tx.query('DELETE FROM webhook_deliveries WHERE id = ANY($1) RETURNING 1', [
      deliveryIds,
    ]);
    result.attempts = attempts.length;
    result.deliveries = removed.length;
  }
  const events = await tx.query('DELETE FROM events WHERE id = ANY($1) RETURNING 1', [prunable]);
  result.events = events.length;
  return result;
}
