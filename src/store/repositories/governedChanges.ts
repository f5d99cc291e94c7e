import type {
  GovernedChange,
  GovernedChangeKind,
  GovernedChangeStatus,
} from '../../domain/governedChanges.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Queryable } from '../store.ts';
import { type KeysetFilter, listNewestFirst, toDate, toJsonObject } from './rows.ts';

const COLUMNS =
  'id, organization_id, kind, action, target_id, payload, status, proposed_by, proposed_by_key, approval_id, policy_version, rule, failure, created_at, decided_at, applied_at';

function changeFromRow(row: Record<string, unknown>): GovernedChange {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    kind: row.kind as GovernedChangeKind,
    action: String(row.action),
    targetId: row.target_id === null ? null : String(row.target_id),
    payload: toJsonObject(row.payload),
    status: row.status as GovernedChangeStatus,
    proposedBy: String(row.proposed_by),
    proposedByKey: row.proposed_by_key === null ? null : String(row.proposed_by_key),
    approvalId: row.approval_id === null ? null : String(row.approval_id),
    policyVersion: Number(row.policy_version),
    rule: String(row.rule),
    failure: row.failure === null ? null : toJsonObject(row.failure),
    createdAt: toDate(row.created_at),
    decidedAt: row.decided_at === null ? null : toDate(row.decided_at),
    appliedAt: row.applied_at === null ? null : toDate(row.applied_at),
  };
}

export async function insertGovernedChange(db: Queryable, change: GovernedChange): Promise<void> {
  await db.query(
    `INSERT INTO governed_changes (${COLUMNS})
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

export async function findGovernedChange(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<GovernedChange | undefined> {
  const [row] = await db.query(
    `SELECT ${COLUMNS} FROM governed_changes WHERE organization_id = $1 AND id = $2${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [organizationId, id],
  );
  return row ? changeFromRow(row) : undefined;
}

export interface GovernedChangeFilter extends KeysetFilter {
  status?: GovernedChangeStatus | undefined;
  kind?: GovernedChangeKind | undefined;
}

export async function listGovernedChanges(
  db: Queryable,
  organizationId: string,
  filter: GovernedChangeFilter,
  rowsMax: number,
): Promise<GovernedChange[]> {
  const rows = await listNewestFirst(db, {
    table: 'governed_changes',
    columns: COLUMNS,
    prefix: ID_PREFIXES.governedChange,
    organizationId,
    filter,
    equal: [
      ['status', filter.status],
      ['kind', filter.kind],
    ],
    rowsMax,
  });
  return rows.map(changeFromRow);
}
