/** Approvals: opened in batches by the ledger writer, voted on, expired, found with their votes and listed. */
import type {
  Approval,
  ApprovalResourceType,
  ApprovalStatus,
  ApprovalVote,
} from '../../../domain/approvals.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { columnRows, rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import {
  fieldArrays,
  type KeysetFilter,
  nullableDate,
  nullableText,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

/** An approval's row, without its votes (read separately, for all the rows of a read at once). */
const { columns: COLUMNS, fromRow: approvalFromRow } = columnRows<Omit<Approval, 'votes'>>({
  id: String,
  organizationId: String,
  resourceType: stored,
  resourceId: String,
  status: stored,
  policyVersion: Number,
  rule: String,
  quorum: Number,
  roles: stored,
  distinctRoles: Boolean,
  initiatedBy: String,
  expiresAt: toDate,
  createdAt: toDate,
  decidedAt: nullableDate,
});

const voteFromRow = rowMapper<ApprovalVote>({
  memberId: String,
  email: String,
  role: stored,
  decision: stored,
  comment: nullableText,
  apiKeyId: String,
  createdAt: toDate,
});

/** Each approval's votes in the order they were cast, with the voter's email. */
async function votesOf(db: Queryable, approvalIds: readonly string[]): Promise<Map<string, ApprovalVote[]>> {
  const byApproval = new Map<string, ApprovalVote[]>(approvalIds.map((id) => [id, []]));
  if (approvalIds.length === 0) return byApproval;
  const rows = await db.query(
    `SELECT v.approval_id, v.member_id, m.email, v.role, v.decision, v.comment, v.api_key_id, v.created_at
       FROM approval_votes v JOIN members m ON m.id = v.member_id
      WHERE v.approval_id = ANY($1::text[])
      ORDER BY v.created_at, v.member_id`,
    [approvalIds],
  );
  for (const row of rows) {
    byApproval.get(String(row.approval_id))?.push(voteFromRow(row));
  }
  return byApproval;
}

async function withVotes(db: Queryable, rows: Record<string, unknown>[]): Promise<Approval[]> {
  const votes = await votesOf(
    db,
    rows.map((r) => String(r.id)),
  );
  return rows.map((r) => ({ ...approvalFromRow(r), votes: votes.get(String(r.id)) ?? [] }));
}

/** Opens approvals with one statement (the ledger writer's batch). */
export async function insertApprovals(db: Queryable, approvals: readonly Approval[]): Promise<void> {
  if (approvals.length === 0) return;
  await db.query(
    `INSERT INTO approvals (${COLUMNS})
     SELECT v.id, v.organization_id, v.resource_type, v.resource_id, v.status, v.policy_version, v.rule, v.quorum,
            string_to_array(v.roles, ','), v.distinct_roles, v.initiated_by, v.expires_at, v.created_at, NULL
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::int[],
                   $9::text[], $10::boolean[], $11::text[], $12::timestamptz[], $13::timestamptz[])
         AS v(id, organization_id, resource_type, resource_id, status, policy_version, rule, quorum, roles,
              distinct_roles, initiated_by, expires_at, created_at)`,
    [
      ...fieldArrays(
        approvals,
        'id',
        'organizationId',
        'resourceType',
        'resourceId',
        'status',
        'policyVersion',
        'rule',
        'quorum',
      ),
      approvals.map((a) => a.roles.join(',')),
      ...fieldArrays(approvals, 'distinctRoles', 'initiatedBy'),
      approvals.map((a) => a.expiresAt.toISOString()),
      approvals.map((a) => a.createdAt.toISOString()),
    ],
  );
}

/** Approvals' rows as stored, before their votes are read. */
const APPROVAL_ROWS: RecordTable<Record<string, unknown>> = {
  name: 'approvals',
  columns: COLUMNS,
  prefix: ID_PREFIXES.approval,
  fromRow: (row) => row,
};

const findApprovalRow = organizationRecordFinder(APPROVAL_ROWS);

export async function findApproval(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Approval | undefined> {
  const row = await findApprovalRow(db, organizationId, id, options);
  return (await withVotes(db, row ? [row] : []))[0];
}

/** The pending approval of a resource, locked. */
export async function findPendingApprovalOf(
  db: Queryable,
  resourceId: string,
): Promise<Approval | undefined> {
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM approvals WHERE resource_id = $1 AND status = 'pending' FOR UPDATE`,
    [resourceId],
  );
  return (await withVotes(db, rows))[0];
}

export async function insertVote(db: Queryable, approvalId: string, vote: ApprovalVote): Promise<void> {
  await db.query(
    `INSERT INTO approval_votes (approval_id, member_id, role, decision, comment, api_key_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [approvalId, vote.memberId, vote.role, vote.decision, vote.comment, vote.apiKeyId, vote.createdAt],
  );
}

export async function saveApprovalStatus(db: Queryable, approval: Approval): Promise<void> {
  await db.query('UPDATE approvals SET status = $2, decided_at = $3 WHERE id = $1', [
    approval.id,
    approval.status,
    approval.decidedAt,
  ]);
}

export interface ApprovalFilter extends KeysetFilter {
  status?: ApprovalStatus | undefined;
  resourceType?: ApprovalResourceType | undefined;
  resourceId?: string | undefined;
}

const listApprovalRows = newestFirstLister(
  APPROVAL_ROWS,
  byFields<ApprovalFilter>('status', 'resourceType', 'resourceId'),
);

/** Newest first; served by (organization_id, status, id), (organization_id, resource_id) or (organization_id, id). */
export async function listApprovals(
  db: Queryable,
  organizationId: string,
  filter: ApprovalFilter,
  rowsMax: number,
): Promise<Approval[]> {
  return withVotes(db, await listApprovalRows(db, organizationId, filter, rowsMax));
}

/**
 * Pending approvals whose time is up, oldest expiry first, unlocked: the expiry worker then locks each
 * one's resource before the approval, in the order every vote and cancel takes them, so none deadlock.
 */
export async function findExpiredApprovals(
  db: Queryable,
  now: Date,
  rowsMax: number,
): Promise<{ id: string; organizationId: string }[]> {
  const rows = await db.query(
    `SELECT id, organization_id FROM approvals WHERE status = 'pending' AND expires_at <= $1
      ORDER BY expires_at LIMIT $2`,
    [now, rowsMax],
  );
  return rows.map((r) => ({ id: String(r.id), organizationId: String(r.organization_id) }));
}

/** The newest approval of a resource, whatever its status. */
export async function findLatestApprovalIdOf(
  db: Queryable,
  organizationId: string,
  resourceId: string,
): Promise<string | null> {
  const [row] = await db.query(
    'SELECT id FROM approvals WHERE organization_id = $1 AND resource_id = $2 ORDER BY id DESC LIMIT 1',
    [organizationId, resourceId],
  );
  return row ? String(row.id) : null;
}
