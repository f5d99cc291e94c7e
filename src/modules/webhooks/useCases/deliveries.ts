/** An event's deliveries: queued again by recover and redeliver, each one transaction, and read as a log. */
import type { Deps } from '../../../app/deps.ts';
import { getEvent } from '../../../app/events.ts';
import { invalidStateTransition, resourceMissing } from '../../../domain/errors.ts';
import { findEvent } from '../../../store/repositories/events.ts';
import type { Queryable } from '../../../store/store.ts';
import { listDeliveriesOfEvent } from '../repository/deliveryLog.ts';
import { eventsSince, requeueDeliveries } from '../repository/requeue.ts';
import { listSubscriptions as listSubscriptionRows, type Subscription } from '../repository/subscriptions.ts';
import { getSubscription } from './subscriptions.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { DeliveryView } from '../repository/deliveryLog.ts';

/** Events one recover call re-queues at most; call again with a later `since` for more. */
export const WEBHOOK_RECOVER_EVENTS_MAX = 10_000;

/** Re-queues, due now, every event since `since` that the subscription wants. */
export async function recoverSubscription(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  since: Date,
): Promise<{ subscription: Subscription; requeued: number }> {
  const subscription = await getSubscription(tx, organizationId, id, true);
  if (subscription.status !== 'enabled') {
    throw invalidStateTransition(
      'Subscription disabled',
      'Enable the subscription before recovering its events.',
    );
  }
  const events = (await eventsSince(tx, organizationId, since, WEBHOOK_RECOVER_EVENTS_MAX)).filter(
    (e) => subscription.events.includes('*') || subscription.events.includes(e.type),
  );
  await requeueDeliveries(
    tx,
    events.map((e) => ({
      id: deps.newId('webhookDelivery'),
      organizationId,
      eventId: e.id,
      subscriptionId: id,
    })),
    deps.now(),
  );
  return { subscription, requeued: events.length };
}

/** Sends an event again now to every enabled subscription that wants its type. */
export async function redeliverEvent(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  eventId: string,
): Promise<number> {
  const event = await findEvent(tx, organizationId, eventId);
  if (!event) throw resourceMissing('event', eventId);
  const subscriptions = (await listSubscriptionRows(tx, organizationId, {}, Number.MAX_SAFE_INTEGER)).filter(
    (s) => s.status === 'enabled' && (s.events.includes('*') || s.events.includes(event.type)),
  );
  await requeueDeliveries(
    tx,
    subscriptions.map((s) => ({
      id: deps.newId('webhookDelivery'),
      organizationId,
      eventId,
      subscriptionId: s.id,
    })),
    deps.now(),
  );
  return subscriptions.length;
}

export async function eventDeliveries(deps: Deps, organizationId: string, eventId: string) {
  await getEvent(deps, organizationId, eventId); // 404 unless the event is the organization's
  return listDeliveriesOfEvent(deps.store, organizationId, eventId);
}
