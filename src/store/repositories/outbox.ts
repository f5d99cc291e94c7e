/**
 * The outbox's fan-out: in the transaction that writes events, a webhook delivery for each (event, enabled
 * subscription of its organization that wants the type), and the notice that wakes the dispatchers. Part of
 * the shared core: every use case that writes an event reaches webhooks through here, not through the
 * webhooks module.
 */
import type { Queryable } from '../store.ts';
import { fieldArrays } from './rows.ts';

/**
 * The outbox fan-out: a delivery for each (event, enabled subscription of its organization that wants the
 * type), in the transaction that writes the events. One statement however many events.
 */
export interface EnabledSubscription {
  id: string;
  organizationId: string;
  events: string[];
}

/** The organizations' enabled subscriptions and the event types each wants ('*' for all). */
export async function findEnabledSubscriptions(
  db: Queryable,
  organizationIds: readonly string[],
): Promise<EnabledSubscription[]> {
  if (organizationIds.length === 0) return [];
  const rows = await db.query<{ id: string; organization_id: string; events: string[] }>(
    `SELECT id, organization_id, events FROM webhook_subscriptions
      WHERE organization_id = ANY($1::text[]) AND status = 'enabled' AND deleted_at IS NULL`,
    [organizationIds],
  );
  return rows.map((r) => ({ id: r.id, organizationId: r.organization_id, events: r.events }));
}

export async function enqueueDeliveriesForEvents(
  db: Queryable,
  events: readonly { id: string; organizationId: string; type: string }[],
  newIds: () => string,
  now: Date,
  /** Where the deliveries are inserted (and the channel notified): `db`, or a StatementChain. */
  writes: Queryable = db,
  /** The events' organizations' enabled subscriptions, when the caller has read them in this transaction. */
  subscriptions?: readonly EnabledSubscription[],
): Promise<void> {
  if (events.length === 0) return;
  const wanted =
    subscriptions ?? (await findEnabledSubscriptions(db, [...new Set(events.map((e) => e.organizationId))]));
  if (wanted.length === 0) return;
  const rows: { id: string; organizationId: string; eventId: string; subscriptionId: string }[] = [];
  for (const e of events) {
    for (const s of wanted) {
      if (s.organizationId !== e.organizationId) continue;
      if (!s.events.includes('*') && !s.events.includes(e.type)) continue;
      rows.push({ id: newIds(), organizationId: e.organizationId, eventId: e.id, subscriptionId: s.id });
    }
  }
  await insertDeliveries(writes, rows, now);
}

/**
 * The channel notified by every transaction that queues deliveries: dispatchers listen on it, so a delivery
 * is claimed as soon as it commits rather than at the next poll.
 */
export const WEBHOOK_DELIVERIES_CHANNEL = 'mkoba_webhook_deliveries';

/**
 * Queues deliveries due at `now`, and notifies WEBHOOK_DELIVERIES_CHANNEL (delivered when the transaction
 * commits, once per transaction). One that exists already (redeliver, recover) is queued again with a fresh
 * retry schedule; if a dispatcher holds it under a live lease, it stays with that dispatcher (the attempt in
 * flight becomes the first of the new schedule), so it is never sent twice at once nor counted out of the
 * subscription's in-flight limit.
 */
export async function insertDeliveries(
  db: Queryable,
  rows: readonly { id: string; organizationId: string; eventId: string; subscriptionId: string }[],
  now: Date,
): Promise<void> {
  if (rows.length === 0) return;
  const leased = "d.status = 'delivering' AND d.lease_expires_at > $5";
  await db.query(
    `INSERT INTO webhook_deliveries AS d (id, organization_id, event_id, subscription_id, status, next_attempt_at, created_at)
     SELECT id, organization_id, event_id, subscription_id, 'pending', $5, $5
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(id, organization_id, event_id, subscription_id)
     ON CONFLICT (event_id, subscription_id) DO UPDATE SET
       status = CASE WHEN ${leased} THEN 'delivering' ELSE 'pending' END,
       lease_expires_at = CASE WHEN ${leased} THEN d.lease_expires_at END,
       lease_owner = CASE WHEN ${leased} THEN d.lease_owner END,
       attempts_before_requeue = CASE WHEN ${leased} THEN d.attempts - 1 ELSE d.attempts END,
       next_attempt_at = EXCLUDED.next_attempt_at`,
    [...fieldArrays(rows, 'id', 'organizationId', 'eventId', 'subscriptionId'), now],
  );
  await db.query(`NOTIFY ${WEBHOOK_DELIVERIES_CHANNEL}`);
}
