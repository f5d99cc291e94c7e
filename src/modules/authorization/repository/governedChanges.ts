/** Governed changes: proposals that wait for an approval, their decisions, found by id and listed newest first. */
import type {
  GovernedChange,
  GovernedChangeKind,
  GovernedChangeStatus,
} from '../../../domain/governedChanges.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableJsonObject,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const GOVERNED_CHANGES = recordTable<GovernedChange>('governed_changes', ID_PREFIXES.governedChange, {
  id: String,
  organizationId: String,
  kind: stored,
  action: String,
  targetId: nullableText,
  payload: toJsonObject,
  status: stored,
  proposedBy: String,
  proposedByKey: nullableText,
  approvalId: nullableText,
  policyVersion: Number,
  rule: String,
  failure: nullableJsonObject,
  createdAt: toDate,
  decidedAt: nullableDate,
  appliedAt: nullableDate,
});

export async function insertGovernedChange(db: Queryable, change: GovernedChange): Promise<void> {
  await db.query(
    `INSERT INTO governed_changes (${GOVERNED_CHANGES.columns})
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13::jsonb, $14, $15, $16)`,
    [
      change.id,
      change.organizationId,
      change.kind,
      change.action,
      change.targetId,
      JSON.stringify(change.payload),
      change.status,
      change.proposedBy,
      change.proposedByKey,
      change.approvalId,
      change.policyVersion,
      change.rule,
      change.failure === null ? null : JSON.stringify(change.failure),
      change.createdAt,
      change.decidedAt,
      change.appliedAt,
    ],
  );
}

/** Its decision: status, target (a creation's new id), failure and times. */
export async function saveGovernedChange(db: Queryable, change: GovernedChange): Promise<void> {
  await db.query(
    `UPDATE governed_changes
        SET status = $3, target_id = $4, failure = $5::jsonb, decided_at = $6, applied_at = $7
      WHERE organization_id = $1 AND id = $2`,
    [
      change.organizationId,
      change.id,
      change.status,
      change.targetId,
      change.failure === null ? null : JSON.stringify(change.failure),
      change.decidedAt,
      change.appliedAt,
    ],
  );
}

export const findGovernedChange = organizationRecordFinder(GOVERNED_CHANGES);

export interface GovernedChangeFilter extends KeysetFilter {
  status?: GovernedChangeStatus | undefined;
  kind?: GovernedChangeKind | undefined;
}

export const listGovernedChanges = newestFirstLister(
  GOVERNED_CHANGES,
  byFields<GovernedChangeFilter>('status', 'kind'),
);

/**
 * Erases the sealed `credentials` kept in the organization's decided changes of `kind` (their payloads
 * as proposed): once the configuration they made is removed, no copy of its key remains. A change still
 * pending keeps its own, to be applied or refused. Returns how many were erased.
 */
export async function eraseDecidedChangeCredentials(
  db: Queryable,
  organizationId: string,
  kind: GovernedChangeKind,
): Promise<number> {
  const rows = await db.query(
    `UPDATE governed_changes
        SET payload = jsonb_set(payload, '{credentials}', '{"erased": true}'::jsonb)
      WHERE organization_id = $1 AND kind = $2 AND status <> 'pending' AND payload ? 'credentials'
      RETURNING id`,
    [organizationId, kind],
  );
  return rows.length;
}
