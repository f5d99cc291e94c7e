/** An event's deliveries as the log shows them, each with its attempts. */
import { type DeliveryView, withAttemptLogs } from '../../../store/repositories/webhookDeliveryLog.ts';
import type { Queryable } from '../../../store/store.ts';

export type { DeliveryView } from '../../../store/repositories/webhookDeliveryLog.ts';

export async function listDeliveriesOfEvent(
  db: Queryable,
  organizationId: string,
  eventId: string,
): Promise<DeliveryView[]> {
  const deliveries = await db.query(
    `SELECT id, event_id, subscription_id, status, attempts, next_attempt_at, last_attempt_at, last_status_code, last_error,
            succeeded_at, created_at
       FROM webhook_deliveries WHERE organization_id = $1 AND event_id = $2 ORDER BY id`,
    [organizationId, eventId],
  );
  return withAttemptLogs(db, deliveries);
}
