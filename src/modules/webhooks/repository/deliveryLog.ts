/** An event's deliveries as the log shows them, each with its attempts. */
import { nullableDate, nullableNumber, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { AttemptRecord } from './deliveries.ts';

export interface DeliveryView {
  id: string;
  eventId: string;
  subscriptionId: string;
  status: string;
  attempts: number;
  nextAttemptAt: Date;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  succeededAt: Date | null;
  createdAt: Date;
  log: AttemptRecord[];
}

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
  if (deliveries.length === 0) return [];
  const attempts = await db.query(
    `SELECT delivery_id, attempt, started_at, duration_ms, status_code, error_class, response_body
       FROM webhook_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt`,
    [deliveries.map((d) => d.id)],
  );
  return deliveries.map((d) => ({
    id: String(d.id),
    eventId: String(d.event_id),
    subscriptionId: String(d.subscription_id),
    status: String(d.status),
    attempts: Number(d.attempts),
    nextAttemptAt: toDate(d.next_attempt_at),
    lastAttemptAt: nullableDate(d.last_attempt_at),
    lastStatusCode: nullableNumber(d.last_status_code),
    lastError: nullableText(d.last_error),
    succeededAt: nullableDate(d.succeeded_at),
    createdAt: toDate(d.created_at),
    log: attempts
      .filter((a) => a.delivery_id === d.id)
      .map((a) => ({
        deliveryId: String(a.delivery_id),
        attempt: Number(a.attempt),
        startedAt: toDate(a.started_at),
        durationMs: Number(a.duration_ms),
        statusCode: nullableNumber(a.status_code),
        errorClass: nullableText(a.error_class),
        responseBody: nullableText(a.response_body),
      })),
  }));
}
