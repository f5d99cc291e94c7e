/** Review cases: opened in batches, decided by an operator, found by id or verification, listed newest first. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { ReviewCase, ReviewFindings, ReviewKind, ReviewStatus } from '../../../domain/reviews.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  fieldArrays,
  type KeysetFilter,
  nullableDate,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const REVIEW_CASES = recordTable<ReviewCase>('review_cases', ID_PREFIXES.review, {
  id: String,
  organizationId: String,
  kind: stored,
  status: stored,
  transferId: nullableText,
  customerId: nullableText,
  walletId: nullableText,
  verificationId: nullableText,
  findings: toJsonObject<ReviewFindings>,
  note: nullableText,
  decidedBy: nullableText,
  createdAt: toDate,
  decidedAt: nullableDate,
  depositId: nullableText,
});

/** Opens many cases with one statement (the ledger writer's batch). */
export async function insertReviewCases(db: Queryable, cases: readonly ReviewCase[]): Promise<void> {
  if (cases.length === 0) return;
  await db.query(
    `INSERT INTO review_cases (id, organization_id, kind, status, transfer_id, customer_id, wallet_id, verification_id,
                               findings, created_at, deposit_id)
     SELECT v.id, v.organization_id, v.kind, v.status, v.transfer_id, v.customer_id, v.wallet_id, v.verification_id,
            v.findings::jsonb, v.created_at, v.deposit_id
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::timestamptz[], $10::text[], $11::text[])
         AS v(id, organization_id, kind, status, transfer_id, customer_id, wallet_id, findings, created_at, verification_id,
              deposit_id)`,
    [
      ...fieldArrays(cases, 'id', 'organizationId', 'kind', 'status', 'transferId', 'customerId', 'walletId'),
      cases.map((c) => JSON.stringify(c.findings)),
      cases.map((c) => c.createdAt.toISOString()),
      ...fieldArrays(cases, 'verificationId', 'depositId'),
    ],
  );
}

export const findReviewCase = organizationRecordFinder(REVIEW_CASES);

/** Records an operator's decision on a case. */
export async function saveReviewDecision(db: Queryable, review: ReviewCase): Promise<void> {
  await db.query(
    'UPDATE review_cases SET status = $2, note = $3, decided_by = $4, decided_at = $5 WHERE id = $1',
    [review.id, review.status, review.note, review.decidedBy, review.decidedAt],
  );
}

/** The open case holding a verification, if any. */
export async function findOpenReviewOfVerification(
  db: Queryable,
  verificationId: string,
): Promise<ReviewCase | undefined> {
  const [row] = await db.query(
    `SELECT ${REVIEW_CASES.columns} FROM review_cases WHERE verification_id = $1 AND status = 'open'`,
    [verificationId],
  );
  return row && REVIEW_CASES.fromRow(row);
}

export interface ReviewFilter extends KeysetFilter {
  status?: ReviewStatus | undefined;
  kind?: ReviewKind | undefined;
  transferId?: string | undefined;
}

/** Newest first; served by (organization_id, status, id) or (organization_id, id). */
export const listReviewCases = newestFirstLister(
  REVIEW_CASES,
  byFields<ReviewFilter>('status', 'kind', 'transferId'),
);
