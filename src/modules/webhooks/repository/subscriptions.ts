/** Webhook subscriptions: their rows, read, written and soft-deleted. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { PayloadVersion } from '../../../domain/payloadVersions.ts';
import type { PayloadFormat, SubscriptionStatus } from '../../../domain/webhooks.ts';
import { newestFirstListerBy, recordTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import { insertSecret, type SealedSecret } from './secrets.ts';

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

const SUBSCRIPTIONS = recordTable<Subscription>('webhook_subscriptions', ID_PREFIXES.webhookSubscription, {
  id: String,
  organizationId: String,
  url: String,
  events: stored,
  description: nullableText,
  payloadFormat: stored,
  status: stored,
  disabledReason: nullableText,
  failingSince: nullableDate,
  createdAt: toDate,
  updatedAt: toDate,
  apiVersion: stored,
});

/** The columns a subscription's changes write, in both statements' order: url through failing_since. */
function changeableParams(s: Subscription): unknown[] {
  return [s.url, s.events, s.description, s.payloadFormat, s.status, s.disabledReason, s.failingSince];
}

export async function insertSubscription(
  db: Queryable,
  s: Subscription,
  secret: SealedSecret,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_subscriptions (${SUBSCRIPTIONS.columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [s.id, s.organizationId, ...changeableParams(s), s.createdAt, s.updatedAt, s.apiVersion],
  );
  await insertSecret(db, s.id, secret, s.createdAt);
}

export async function saveSubscription(db: Queryable, s: Subscription): Promise<void> {
  await db.query(
    `UPDATE webhook_subscriptions SET url = $2, events = $3, description = $4, payload_format = $5, status = $6,
        disabled_reason = $7, failing_since = $8, updated_at = $9, api_version = $10 WHERE id = $1`,
    [s.id, ...changeableParams(s), s.updatedAt, s.apiVersion],
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
    `SELECT ${SUBSCRIPTIONS.columns} FROM webhook_subscriptions WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL${options.forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
    [organizationId, id],
  );
  return row && SUBSCRIPTIONS.fromRow(row);
}

/** The organization's subscriptions not deleted, newest first. */
export const listSubscriptions = newestFirstListerBy(
  SUBSCRIPTIONS,
  ['organization_id'],
  ['deleted_at IS NULL'],
);

/** Soft delete: attempts and deliveries keep pointing at it; pending deliveries stop. */
export async function deleteSubscription(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(
    "UPDATE webhook_subscriptions SET deleted_at = $2, status = 'disabled', updated_at = $2 WHERE id = $1",
    [id, now],
  );
}
