/**
 * The dispatcher's writes around a send: where claimed deliveries stand before it, a delivery given back
 * unsent, and after it the attempts logged and the outcomes recorded, locks taken in one order.
 */
import type { PayloadVersion } from '../../../domain/payloadVersions.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../../domain/signing.ts';
import {
  type PayloadFormat,
  storableText,
  WEBHOOK_RESPONSE_BODY_CHARS_MAX,
} from '../../../domain/webhooks.ts';
import { type RowFields, rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { fieldArrays, isTrue } from '../../../store/repositories/rows.ts';
import type { AttemptRecord } from '../../../store/repositories/webhookDeliveryLog.ts';
import type { Queryable } from '../../../store/store.ts';
import { liveSecretsJson, type StoredSecret, secretsFromJson } from './secrets.ts';

export type { AttemptRecord } from '../../../store/repositories/webhookDeliveryLog.ts';

/** Text as the log keeps it: bounded, and never a NUL or lone surrogate, which would fail the whole outcome. */
const loggable = (text: string | null) =>
  text === null ? null : storableText(text, WEBHOOK_RESPONSE_BODY_CHARS_MAX);

/** Logs attempts, one statement for all; an attempt already logged (a retried outcome) is kept as it was. */
export async function insertAttempts(db: Queryable, attempts: readonly AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return;
  await db.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error_class, response_body)
     SELECT * FROM unnest($1::text[], $2::integer[], $3::timestamptz[], $4::integer[], $5::integer[], $6::text[], $7::text[])
     ON CONFLICT (delivery_id, attempt) DO NOTHING`,
    [
      ...fieldArrays(
        attempts,
        'deliveryId',
        'attempt',
        'startedAt',
        'durationMs',
        'statusCode',
        'errorClass',
      ),
      attempts.map((a) => loggable(a.responseBody)),
    ],
  );
}

export interface DeliveryState {
  status: string;
  attempts: number;
  /** Attempts made before the delivery was last queued by hand: the retry schedule counts from here. */
  attemptsBeforeRequeue: number;
}

/** A claimed delivery as it stands just before sending, with where it goes and whether that still takes it. */
export interface DeliveryToSend extends DeliveryState {
  url: string;
  payloadFormat: PayloadFormat;
  apiVersion: PayloadVersion;
  /** The subscription is enabled and not deleted. */
  subscriptionLive: boolean;
  /** Its secrets live now, still sealed, newest first, at most WEBHOOK_SIGNING_SECRETS_MAX. */
  secrets: StoredSecret[];
}

const DELIVERY_STATE_FIELDS: RowFields<DeliveryState> = {
  status: String,
  attempts: Number,
  attemptsBeforeRequeue: Number,
};

const deliveryStateOf = rowMapper(DELIVERY_STATE_FIELDS);

const deliveryToSendFromRow = rowMapper<DeliveryToSend>({
  ...DELIVERY_STATE_FIELDS,
  url: String,
  payloadFormat: stored,
  apiVersion: stored,
  subscriptionLive: isTrue,
  secrets: secretsFromJson,
});

const DELIVERIES_TO_SEND = `SELECT d.id, d.status, d.attempts, d.attempts_before_requeue, s.url, s.payload_format,
            s.api_version, (s.status = 'enabled' AND s.deleted_at IS NULL) AS subscription_live,
            ${liveSecretsJson('d.subscription_id', '$2', '$3')} AS secrets
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ANY($1::text[])`;

/**
 * The same, after renewing the leases still held by owner $4 that end before $6 (half a lease from now) to
 * $5 (a lease from now): a row with time to spare is not written.
 */
const DELIVERIES_TO_SEND_RENEWED = `WITH renewed AS (
       UPDATE webhook_deliveries SET lease_expires_at = $5::timestamptz
        WHERE id = ANY($1::text[]) AND status = 'delivering' AND lease_owner = $4::text
          AND lease_expires_at < $6::timestamptz
       RETURNING id
     ) ${DELIVERIES_TO_SEND}`;

/**
 * The claimed deliveries as they stand now, by id (one read for many), with their subscriptions' secrets live
 * at `now`; a missing id is gone. With `renew`, the leases its owner still holds on them that end before
 * half-way to `until` run until `until` first: a delivery that waited in a queue longer than its lease foresaw is still leased when sent,
 * and one another dispatcher took over meanwhile shows its new attempt.
 */
export async function findDeliveriesToSend(
  db: Queryable,
  deliveryIds: readonly string[],
  now: Date,
  renew?: { owner: string; until: Date },
): Promise<Map<string, DeliveryToSend>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = renew
    ? await db.query(DELIVERIES_TO_SEND_RENEWED, [
        deliveryIds,
        now,
        WEBHOOK_SIGNING_SECRETS_MAX,
        renew.owner,
        renew.until,
        new Date((now.getTime() + renew.until.getTime()) / 2),
      ])
    : await db.query(DELIVERIES_TO_SEND, [deliveryIds, now, WEBHOOK_SIGNING_SECRETS_MAX]);
  return new Map(rows.map((row) => [String(row.id), deliveryToSendFromRow(row)]));
}

/**
 * Gives back a leased delivery that was not sent (its subscription was disabled or deleted after the
 * claim): pending again, and the attempt the claim counted is uncounted. False when the lease was lost.
 */
export async function releaseDelivery(db: Queryable, deliveryId: string, attempt: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', lease_expires_at = NULL, lease_owner = NULL, attempts = attempts - 1
      WHERE id = $1 AND attempts = $2 AND status = 'delivering' RETURNING id`,
    [deliveryId, attempt],
  );
  return rows.length > 0;
}

/**
 * Locks deliveries for recording their outcomes, in (subscription, delivery) order: the order every batch
 * of outcomes takes them in, after any subscription rows, so two batches cannot deadlock.
 */
export async function lockDeliveries(
  db: Queryable,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryState>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db.query(
    `SELECT id, status, attempts, attempts_before_requeue FROM webhook_deliveries
      WHERE id = ANY($1::text[]) ORDER BY subscription_id, id FOR NO KEY UPDATE`,
    [deliveryIds],
  );
  return new Map(rows.map((row) => [String(row.id), deliveryStateOf(row)]));
}

/** What an attempt did to its delivery: done, to be tried again at nextAttemptAt, or given up on. */
export interface DeliveryOutcome {
  status: 'succeeded' | 'pending' | 'exhausted';
  nextAttemptAt: Date;
  statusCode: number | null;
  error: string | null;
}

/** How finishDeliveries names an attempt it recorded. */
export const deliveryAttemptKey = (deliveryId: string, attempt: number) => `${deliveryId}#${attempt}`;

/**
 * Records the outcomes of attempts this dispatcher leased, one statement for all; returns the attempts
 * recorded (deliveryAttemptKey). An outcome whose lease was lost meanwhile (the delivery is another
 * attempt's now) is not.
 */
export async function finishDeliveries(
  db: Queryable,
  outcomes: readonly (DeliveryOutcome & { deliveryId: string; attempt: number; finishedAt: Date })[],
): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET status = v.status, next_attempt_at = v.next_attempt_at, lease_expires_at = NULL, lease_owner = NULL,
        last_attempt_at = v.finished_at, last_status_code = v.status_code, last_error = v.error,
        succeeded_at = CASE WHEN v.status = 'succeeded' THEN v.finished_at ELSE d.succeeded_at END
       FROM unnest($1::text[], $2::integer[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::integer[], $7::text[])
            AS v(id, attempt, status, next_attempt_at, finished_at, status_code, error)
      WHERE d.id = v.id AND d.attempts = v.attempt AND d.status = 'delivering'
      RETURNING d.id, d.attempts`,
    [
      ...fieldArrays(
        outcomes,
        'deliveryId',
        'attempt',
        'status',
        'nextAttemptAt',
        'finishedAt',
        'statusCode',
      ),
      outcomes.map((o) => loggable(o.error)),
    ],
  );
  return new Set(rows.map((row) => deliveryAttemptKey(String(row.id), Number(row.attempts))));
}

/** Records the outcome of the attempt this dispatcher leased; false when the lease was lost meanwhile. */
export async function finishDelivery(
  db: Queryable,
  deliveryId: string,
  attempt: number,
  outcome: DeliveryOutcome,
  now: Date,
): Promise<boolean> {
  const recorded = await finishDeliveries(db, [{ ...outcome, deliveryId, attempt, finishedAt: now }]);
  return recorded.has(deliveryAttemptKey(deliveryId, attempt));
}
