/** What recover and redeliver read and write: an organization's events since a time, and deliveries queued again. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { insertDeliveries } from '../../../store/repositories/outbox.ts';
import { fieldArrays, keysetConditions } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/**
 * Queues deliveries again (recover, redeliver): the ones that exist are locked first, in (subscription,
 * delivery) order, the order a dispatcher's batch of outcomes locks them in, so the two wait for each other
 * instead of deadlocking; then as insertDeliveries.
 */
export async function requeueDeliveries(
  db: Queryable,
  rows: readonly { id: string; organizationId: string; eventId: string; subscriptionId: string }[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `SELECT d.id FROM webhook_deliveries d
       JOIN unnest($1::text[], $2::text[]) AS v(event_id, subscription_id)
         ON d.event_id = v.event_id AND d.subscription_id = v.subscription_id
      ORDER BY d.subscription_id, d.id FOR NO KEY UPDATE OF d`,
    fieldArrays(rows, 'eventId', 'subscriptionId'),
  );
  await insertDeliveries(db, rows, now);
}

/**
 * Events of an organization created at or after `since`, oldest first, bounded. The id bound lets the
 * (organization_id, id) index start at `since` rather than at the organization's first event: recover runs
 * this while it holds the subscription's lock.
 */
export async function eventsSince(
  db: Queryable,
  organizationId: string,
  since: Date,
  rowsMax: number,
): Promise<{ id: string; type: string }[]> {
  const params: unknown[] = [organizationId];
  const conditions = [
    'organization_id = $1',
    ...keysetConditions({ createdGte: since }, params, '', ID_PREFIXES.event),
  ];
  params.push(rowsMax);
  return db.query<{ id: string; type: string }>(
    `SELECT id, type FROM events WHERE ${conditions.join(' AND ')} ORDER BY id LIMIT $${params.length}`,
    params,
  );
}
