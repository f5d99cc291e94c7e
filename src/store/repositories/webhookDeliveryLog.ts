/**
 * Webhook deliveries as a delivery log shows them (an event's in the API, a subscription's in the console):
 * the delivery rows its caller selected, each with its attempts, read in one more statement.
 */
import type { Queryable } from '../store.ts';
import { rowMapper } from './rowMappers.ts';
import { nullableDate, nullableNumber, nullableText, toDate } from './rows.ts';

/** One attempt to send a delivery, as webhook_attempts logs it. */
export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorClass: string | null;
  responseBody: string | null;
}

/** A delivery as a log shows it, with its attempts. */
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

const attemptFromRow = rowMapper<AttemptRecord>({
  deliveryId: String,
  attempt: Number,
  startedAt: toDate,
  durationMs: Number,
  statusCode: nullableNumber,
  errorClass: nullableText,
  responseBody: nullableText,
});

/**
 * `deliveries` (rows of webhook_deliveries with DeliveryView's columns, in the caller's order), each with its
 * attempts oldest first.
 */
export async function withAttemptLogs(
  db: Queryable,
  deliveries: readonly Record<string, unknown>[],
): Promise<DeliveryView[]> {
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
    log: attempts.filter((a) => a.delivery_id === d.id).map(attemptFromRow),
  }));
}
