/**
 * Organizations' rows: found by id or name, locked, listed by id, created once by name, and the switch for
 * their own webhook subscriptions.
 */
import type { Queryable } from '../store.ts';
import { recordFinderBy, rowTable } from './records.ts';
import { isTrue, toDate } from './rows.ts';

export interface OrganizationRow {
  id: string;
  name: string;
  /** Whether it may create webhook subscriptions (the operator's switch). */
  webhookSubscriptionsEnabled: boolean;
  createdAt: Date;
}

const ORGANIZATIONS = rowTable<OrganizationRow>('organizations', {
  id: String,
  name: String,
  webhookSubscriptionsEnabled: isTrue,
  createdAt: toDate,
});
const { columns: COLUMNS, fromRow } = ORGANIZATIONS;

export const findOrganizationByName = recordFinderBy(ORGANIZATIONS, 'name');

export const findOrganization = recordFinderBy(ORGANIZATIONS, 'id');

/** The organization, locked until commit: changes to its profile and overrides of its gates queue here. */
export const lockOrganization = (db: Queryable, id: string): Promise<OrganizationRow | undefined> =>
  findOrganization(db, id, { forUpdate: true });

/** Organizations after `afterId` in id order, at most `limit`: a walk over every organization. */
export async function listOrganizationIdsAfter(
  db: Queryable,
  afterId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db.query('SELECT id FROM organizations WHERE id > $1 ORDER BY id LIMIT $2', [
    afterId,
    limit,
  ]);
  return rows.map((r) => String(r.id));
}

/** Inserts unless the name exists; returns the organization either way. */
export async function ensureOrganization(
  db: Queryable,
  candidate: OrganizationRow,
): Promise<{ organization: OrganizationRow; created: boolean }> {
  const inserted = await db.query(
    `INSERT INTO organizations (${COLUMNS}) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING RETURNING id`,
    [candidate.id, candidate.name, candidate.webhookSubscriptionsEnabled, candidate.createdAt],
  );
  if (inserted.length > 0) return { organization: candidate, created: true };
  const existing = await findOrganizationByName(db, candidate.name);
  if (!existing) throw new Error(`organization '${candidate.name}' vanished during ensureOrganization`);
  return { organization: existing, created: false };
}

/** Sets the webhook-subscriptions switch; undefined when there is no such organization. */
export async function setWebhookSubscriptionsEnabled(
  db: Queryable,
  id: string,
  enabled: boolean,
): Promise<OrganizationRow | undefined> {
  const [row] = await db.query(
    `UPDATE organizations SET webhook_subscriptions_enabled = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, enabled],
  );
  return row && fromRow(row);
}
