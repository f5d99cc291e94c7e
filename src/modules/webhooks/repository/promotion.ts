/** What a promotion reads of the sandbox's subscriptions and writes here. */
import type { Queryable } from '../../../store/store.ts';
import { insertSecret, type SealedSecret } from './secrets.ts';

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
