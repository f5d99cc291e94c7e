import { ID_PREFIXES } from '../../domain/ids.ts';
import type { PayloadVersion } from '../../domain/payloadVersions.ts';
import { type Keyring, open } from '../../domain/sealing.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from '../../domain/signing.ts';
import {
  type PayloadFormat,
  type SubscriptionStatus,
  storableText,
  WEBHOOK_RESPONSE_BODY_CHARS_MAX,
  webhookSecretContext,
} from '../../domain/webhooks.ts';
import { insertDeliveries } from '../../store/repositories/outbox.ts';
import { type KeysetFilter, keysetConditions, toDate } from '../../store/repositories/rows.ts';
import type { Queryable } from '../../store/store.ts';

export interface Subscription {
  id: string;
  organizationId: string;
  url: string;
  events: string[];
  description: string | null;
  payloadFormat: PayloadFormat;
  /** The payload version its events are rendered in. */
  apiVersion: PayloadVersion;
  status: SubscriptionStatus;
  disabledReason: string | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS =
  'id, organization_id, url, events, description, payload_format, status, disabled_reason, failing_since, created_at, updated_at, api_version';

const optionalDate = (v: unknown) => (v === null || v === undefined ? null : toDate(v));

function fromRow(row: Record<string, unknown>): Subscription {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    url: String(row.url),
    events: row.events as string[],
    description: row.description === null ? null : String(row.description),
    payloadFormat: row.payload_format as PayloadFormat,
    apiVersion: row.api_version as PayloadVersion,
    status: row.status as SubscriptionStatus,
    disabledReason: row.disabled_reason === null ? null : String(row.disabled_reason),
    failingSince: optionalDate(row.failing_since),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** A secret as stored: sealed (src/domain/sealing.ts) under a data key wrapped by master key `keyId`. */
export interface SealedSecret {
  keyId: string;
  sealed: string;
}

export async function insertSubscription(
  db: Queryable,
  s: Subscription,
  secret: SealedSecret,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_subscriptions (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      s.id,
      s.organizationId,
      s.url,
      s.events,
      s.description,
      s.payloadFormat,
      s.status,
      s.disabledReason,
      s.failingSince,
      s.createdAt,
      s.updatedAt,
      s.apiVersion,
    ],
  );
  await insertSecret(db, s.id, secret, s.createdAt);
}

async function insertSecret(db: Queryable, subscriptionId: string, secret: SealedSecret, now: Date) {
  await db.query(
    'INSERT INTO webhook_secrets (subscription_id, key_id, sealed_secret, created_at) VALUES ($1, $2, $3, $4)',
    [subscriptionId, secret.keyId, secret.sealed, now],
  );
}

export async function saveSubscription(db: Queryable, s: Subscription): Promise<void> {
  await db.query(
    `UPDATE webhook_subscriptions SET url = $2, events = $3, description = $4, payload_format = $5, status = $6,
        disabled_reason = $7, failing_since = $8, updated_at = $9, api_version = $10 WHERE id = $1`,
    [
      s.id,
      s.url,
      s.events,
      s.description,
      s.payloadFormat,
      s.status,
      s.disabledReason,
      s.failingSince,
      s.updatedAt,
      s.apiVersion,
    ],
  );
}

/**
 * `forUpdate` locks the row FOR NO KEY UPDATE: writers of the subscription queue behind each other, while
 * transactions that only insert deliveries pointing at it (every transfer's outbox fan-out) do not wait.
 */
export async function findSubscription(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Subscription | undefined> {
  const [row] = await db.query(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [organizationId, id],
  );
  return row && fromRow(row);
}

export async function listSubscriptions(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<Subscription[]> {
  const params: unknown[] = [organizationId];
  const conditions = [
    'organization_id = $1',
    'deleted_at IS NULL',
    ...keysetConditions(filter, params, '', ID_PREFIXES.webhookSubscription),
  ];
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE ${conditions.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(fromRow);
}

/** Soft delete: attempts and deliveries keep pointing at it; pending deliveries stop. */
export async function deleteSubscription(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(
    "UPDATE webhook_subscriptions SET deleted_at = $2, status = 'disabled', updated_at = $2 WHERE id = $1",
    [id, now],
  );
}

/** A stored secret: sealed, or (written before secrets were sealed, until the next start seals it) in clear. */
export interface StoredSecret {
  id: string;
  subscriptionId: string;
  createdAt: Date;
  sealed: string | null;
  legacyPlaintext: string | null;
}

const SECRET_COLUMNS = 'id, subscription_id, created_at, sealed_secret, legacy_plaintext_secret';

function secretFromRow(row: Record<string, unknown>): StoredSecret {
  return {
    id: String(row.id),
    subscriptionId: String(row.subscription_id),
    createdAt: toDate(row.created_at),
    sealed: row.sealed_secret === null ? null : String(row.sealed_secret),
    legacyPlaintext: row.legacy_plaintext_secret === null ? null : String(row.legacy_plaintext_secret),
  };
}

/** A stored secret in clear. */
export function openStoredSecret(keyring: Keyring, secret: StoredSecret): string {
  if (secret.sealed !== null)
    return open(keyring, secret.sealed, webhookSecretContext(secret.subscriptionId));
  return secret.legacyPlaintext ?? '';
}

/** Secrets live now (the current one and rotated-out ones still inside their grace period), newest first. */
export async function liveSecrets(db: Queryable, subscriptionId: string, now: Date): Promise<StoredSecret[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)
      ORDER BY created_at DESC, id DESC`,
    [subscriptionId, now],
  );
  return rows.map(secretFromRow);
}

/**
 * Secrets that sign now, in clear, newest first. Never more than WEBHOOK_SIGNING_SECRETS_MAX: rotation keeps
 * within the bound, and the limit also covers rows written before it did.
 */
export async function activeSecrets(
  db: Queryable,
  keyring: Keyring,
  subscriptionId: string,
  now: Date,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    [subscriptionId, now, WEBHOOK_SIGNING_SECRETS_MAX],
  );
  return rows.map((row) => openStoredSecret(keyring, secretFromRow(row)));
}

/**
 * Adds a new current secret. Every other secret stops signing at graceUntil at the latest: the current one,
 * and an older one still in the grace of an earlier rotation (so a rotation with no grace revokes them all).
 */
export async function rotateSecret(
  db: Queryable,
  subscriptionId: string,
  secret: SealedSecret,
  now: Date,
  graceUntil: Date,
): Promise<void> {
  await db.query(
    'UPDATE webhook_secrets SET expires_at = $2 WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
    [subscriptionId, graceUntil],
  );
  await insertSecret(db, subscriptionId, secret, now);
}

/** Ends these secrets' signing now. */
export async function retireSecrets(db: Queryable, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.query('UPDATE webhook_secrets SET expires_at = $2 WHERE id = ANY($1::bigint[])', [ids, now]);
}

/** Master keys that wrap stored secrets' data keys. */
export async function secretKeyIds(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ key_id: string }>(
    'SELECT DISTINCT key_id FROM webhook_secrets WHERE key_id IS NOT NULL ORDER BY key_id',
  );
  return rows.map((r) => r.key_id);
}

/** Up to rowsMax secrets still in clear (written before secrets were sealed). */
export async function legacySecrets(db: Queryable, rowsMax: number): Promise<StoredSecret[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE legacy_plaintext_secret IS NOT NULL ORDER BY id LIMIT $1 FOR UPDATE`,
    [rowsMax],
  );
  return rows.map(secretFromRow);
}

/** Up to rowsMax sealed secrets whose data key another master key than `keyId` wraps. */
export async function secretsNotWrappedBy(
  db: Queryable,
  keyId: string,
  rowsMax: number,
): Promise<StoredSecret[]> {
  const rows = await db.query(
    `SELECT ${SECRET_COLUMNS} FROM webhook_secrets WHERE key_id <> $1 ORDER BY id LIMIT $2 FOR UPDATE`,
    [keyId, rowsMax],
  );
  return rows.map(secretFromRow);
}

/** Stores a secret's sealed form, dropping any plaintext the row held. */
export async function saveSealedSecret(db: Queryable, id: string, secret: SealedSecret): Promise<void> {
  await db.query(
    'UPDATE webhook_secrets SET key_id = $2, sealed_secret = $3, legacy_plaintext_secret = NULL WHERE id = $1',
    [id, secret.keyId, secret.sealed],
  );
}

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
    [rows.map((r) => r.eventId), rows.map((r) => r.subscriptionId)],
  );
  await insertDeliveries(db, rows, now);
}

export interface ClaimedDelivery {
  id: string;
  organizationId: string;
  eventId: string;
  subscriptionId: string;
  attempts: number;
  eventType: string;
  eventData: Record<string, unknown>;
  eventCreatedAt: Date;
  url: string;
  payloadFormat: PayloadFormat;
  apiVersion: PayloadVersion;
  /** The subscription's failure window as the claim saw it: a success need not touch a closed one. */
  subscriptionFailing: boolean;
  /** Its secrets live at the claim, still sealed, newest first, at most WEBHOOK_SIGNING_SECRETS_MAX. */
  secrets: StoredSecret[];
}

/**
 * Claims due deliveries (and ones whose lease ran out: a dispatcher died holding them), at most
 * `perSubscriptionMax` in flight per subscription, skipping rows other dispatchers hold, and leases them
 * until leaseUntil. The attempt number is taken here, so a crash after sending still counts the attempt.
 *
 * The candidates are read per enabled subscription: at most `perSubscriptionMax` of its oldest due pending
 * rows from the index on (subscription_id, next_attempt_at), so a tick reads one index probe per
 * subscription whatever the backlog, due or not, and never a disabled subscription's backlog. Leased rows
 * (live ones count against their subscription's limit, across dispatchers; run-out ones are due again) are
 * few, at most the dispatchers' slots, and read at once from their own index.
 */
export async function claimDueDeliveries(
  db: Queryable,
  now: Date,
  leaseUntil: Date,
  rowsMax: number,
  perSubscriptionMax: number,
): Promise<ClaimedDelivery[]> {
  // One statement: the candidates' snapshot and the lock are one round trip. A candidate another dispatcher
  // claimed meanwhile is either locked (skipped) or re-checked on its newest version by the lock and dropped.
  // The oldest n due rows of a subscription are among its oldest n pending ones and its run-out leases.
  const rows = await db.query(
    `WITH leased AS (
       SELECT id, subscription_id, next_attempt_at, lease_expires_at > $1 AS live
         FROM webhook_deliveries WHERE status = 'delivering'
     ), in_flight AS (
       SELECT subscription_id, COUNT(*) AS n FROM leased WHERE live GROUP BY subscription_id
     ), due AS (
       SELECT d.id, d.next_attempt_at, s.id AS subscription_id FROM webhook_subscriptions s
        CROSS JOIN LATERAL (
          SELECT p.id, p.next_attempt_at FROM webhook_deliveries p
           WHERE p.subscription_id = s.id AND p.status = 'pending' AND p.next_attempt_at <= $1
           ORDER BY p.next_attempt_at, p.id LIMIT $3
        ) AS d
        WHERE s.status = 'enabled' AND s.deleted_at IS NULL
       UNION ALL
       SELECT l.id, l.next_attempt_at, l.subscription_id FROM leased l
         JOIN webhook_subscriptions s ON s.id = l.subscription_id AND s.status = 'enabled' AND s.deleted_at IS NULL
        WHERE NOT l.live
     ), ranked AS (
       SELECT due.*, ROW_NUMBER() OVER (PARTITION BY subscription_id ORDER BY next_attempt_at, id) AS rank FROM due
     ), candidates AS (
       SELECT r.id FROM ranked r LEFT JOIN in_flight f ON f.subscription_id = r.subscription_id
        WHERE r.rank + COALESCE(f.n, 0) <= $3
        ORDER BY r.next_attempt_at, r.id
        LIMIT $2
     ), locked AS (
       SELECT id FROM webhook_deliveries WHERE id = ANY(ARRAY(SELECT id FROM candidates))
          AND ((status = 'pending' AND next_attempt_at <= $1) OR (status = 'delivering' AND lease_expires_at <= $1))
          FOR UPDATE SKIP LOCKED
     ), claimed AS (
       UPDATE webhook_deliveries d SET status = 'delivering', lease_expires_at = $4, attempts = d.attempts + 1
         FROM locked WHERE d.id = locked.id
       RETURNING d.id, d.organization_id, d.event_id, d.subscription_id, d.attempts
     )
     SELECT c.*, e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
            s.url, s.payload_format, s.api_version, s.failing_since IS NOT NULL AS subscription_failing,
            (SELECT COALESCE(json_agg(w ORDER BY w.created_at DESC, w.id DESC), '[]') FROM (
               SELECT ${SECRET_COLUMNS} FROM webhook_secrets
                WHERE subscription_id = c.subscription_id AND (expires_at IS NULL OR expires_at > $1)
                ORDER BY created_at DESC, id DESC LIMIT $5
             ) w) AS secrets
       FROM claimed c JOIN events e ON e.id = c.event_id JOIN webhook_subscriptions s ON s.id = c.subscription_id`,
    [now, rowsMax, perSubscriptionMax, leaseUntil, WEBHOOK_SIGNING_SECRETS_MAX],
  );
  return rows.map((r) => ({
    id: String(r.id),
    organizationId: String(r.organization_id),
    eventId: String(r.event_id),
    subscriptionId: String(r.subscription_id),
    attempts: Number(r.attempts),
    eventType: String(r.event_type),
    eventData: (typeof r.event_data === 'string' ? JSON.parse(r.event_data) : r.event_data) as Record<
      string,
      unknown
    >,
    eventCreatedAt: toDate(r.event_created_at),
    url: String(r.url),
    payloadFormat: r.payload_format as PayloadFormat,
    apiVersion: r.api_version as PayloadVersion,
    subscriptionFailing: r.subscription_failing === true,
    secrets: (
      (typeof r.secrets === 'string' ? JSON.parse(r.secrets) : r.secrets) as Record<string, unknown>[]
    ).map(secretFromRow),
  }));
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorClass: string | null;
  responseBody: string | null;
}

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
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.attempt),
      attempts.map((a) => a.startedAt),
      attempts.map((a) => a.durationMs),
      attempts.map((a) => a.statusCode),
      attempts.map((a) => a.errorClass),
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
}

const deliveryStateOf = (row: Record<string, unknown>): DeliveryState => ({
  status: String(row.status),
  attempts: Number(row.attempts),
  attemptsBeforeRequeue: Number(row.attempts_before_requeue),
});

/** The claimed deliveries as they stand now, by id (one read for a whole claim); a missing id is gone. */
export async function findDeliveriesToSend(
  db: Queryable,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryToSend>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db.query(
    `SELECT d.id, d.status, d.attempts, d.attempts_before_requeue, s.url, s.payload_format, s.api_version,
            (s.status = 'enabled' AND s.deleted_at IS NULL) AS subscription_live
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ANY($1::text[])`,
    [deliveryIds],
  );
  return new Map(
    rows.map((row) => [
      String(row.id),
      {
        ...deliveryStateOf(row),
        url: String(row.url),
        payloadFormat: row.payload_format as PayloadFormat,
        apiVersion: row.api_version as PayloadVersion,
        subscriptionLive: row.subscription_live === true,
      },
    ]),
  );
}

/**
 * Gives back a leased delivery that was not sent (its subscription was disabled or deleted after the
 * claim): pending again, and the attempt the claim counted is uncounted. False when the lease was lost.
 */
export async function releaseDelivery(db: Queryable, deliveryId: string, attempt: number): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries SET status = 'pending', lease_expires_at = NULL, attempts = attempts - 1
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
    `UPDATE webhook_deliveries d SET status = v.status, next_attempt_at = v.next_attempt_at, lease_expires_at = NULL,
        last_attempt_at = v.finished_at, last_status_code = v.status_code, last_error = v.error,
        succeeded_at = CASE WHEN v.status = 'succeeded' THEN v.finished_at ELSE d.succeeded_at END
       FROM unnest($1::text[], $2::integer[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::integer[], $7::text[])
            AS v(id, attempt, status, next_attempt_at, finished_at, status_code, error)
      WHERE d.id = v.id AND d.attempts = v.attempt AND d.status = 'delivering'
      RETURNING d.id, d.attempts`,
    [
      outcomes.map((o) => o.deliveryId),
      outcomes.map((o) => o.attempt),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.nextAttemptAt),
      outcomes.map((o) => o.finishedAt),
      outcomes.map((o) => o.statusCode),
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
    lastAttemptAt: optionalDate(d.last_attempt_at),
    lastStatusCode: d.last_status_code === null ? null : Number(d.last_status_code),
    lastError: d.last_error === null ? null : String(d.last_error),
    succeededAt: optionalDate(d.succeeded_at),
    createdAt: toDate(d.created_at),
    log: attempts
      .filter((a) => a.delivery_id === d.id)
      .map((a) => ({
        deliveryId: String(a.delivery_id),
        attempt: Number(a.attempt),
        startedAt: toDate(a.started_at),
        durationMs: Number(a.duration_ms),
        statusCode: a.status_code === null ? null : Number(a.status_code),
        errorClass: a.error_class === null ? null : String(a.error_class),
        responseBody: a.response_body === null ? null : String(a.response_body),
      })),
  }));
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

/**
 * What a promotion copies of a sandbox subscription (`mkoba subscriptions promote`): the organization's
 * reviewed choices, column for column. Everything else (id, status, failure state, secrets, times) is the
 * new subscription's own. A column added to subscriptions that the organization chooses belongs here.
 */
export const PROMOTED_SUBSCRIPTION_COLUMNS = [
  'url',
  'events',
  'description',
  'payload_format',
  'api_version',
] as const;
export type PromotedSubscriptionColumn = (typeof PROMOTED_SUBSCRIPTION_COLUMNS)[number];
/** A sandbox subscription as a promotion reads it: its id and the promoted columns' values as stored. */
export type PromotableSubscription = { id: string; values: Record<PromotedSubscriptionColumn, unknown> };

/** The organization's enabled subscriptions, oldest first, with the columns a promotion copies. */
export async function listPromotableSubscriptions(
  db: Queryable,
  organizationId: string,
): Promise<PromotableSubscription[]> {
  const rows = await db.query(
    `SELECT id, ${PROMOTED_SUBSCRIPTION_COLUMNS.join(', ')} FROM webhook_subscriptions
      WHERE organization_id = $1 AND deleted_at IS NULL AND status = 'enabled' ORDER BY id`,
    [organizationId],
  );
  return rows.map((row) => ({
    id: String(row.id),
    values: Object.fromEntries(
      PROMOTED_SUBSCRIPTION_COLUMNS.map((c) => [c, row[c]]),
    ) as PromotableSubscription['values'],
  }));
}

/** Inserts a promoted subscription: the copied columns as read, enabled, with its new sealed secret. */
export async function insertPromotedSubscription(
  db: Queryable,
  target: { id: string; organizationId: string; now: Date },
  source: PromotableSubscription,
  secret: SealedSecret,
): Promise<void> {
  const columns = [
    'id',
    'organization_id',
    'status',
    'created_at',
    'updated_at',
    ...PROMOTED_SUBSCRIPTION_COLUMNS,
  ];
  const values = [
    target.id,
    target.organizationId,
    'enabled',
    target.now,
    target.now,
    ...PROMOTED_SUBSCRIPTION_COLUMNS.map((c) => source.values[c]),
  ];
  await db.query(
    `INSERT INTO webhook_subscriptions (${columns.join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
  await insertSecret(db, target.id, secret, target.now);
}

/** The URLs of the organization's subscriptions (not deleted): what a promotion does not copy twice. */
export async function listSubscriptionUrls(db: Queryable, organizationId: string): Promise<Set<string>> {
  const rows = await db.query(
    'SELECT url FROM webhook_subscriptions WHERE organization_id = $1 AND deleted_at IS NULL',
    [organizationId],
  );
  return new Set(rows.map((row) => String(row.url)));
}
