/** Customers' identity verifications: submitted, decided (now or when due), found and listed. */
import type { EvidenceValue } from '../../../domain/evidence.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type {
  VerificationReason,
  VerificationStatus,
  VerificationSubmission,
} from '../../../domain/verifications.ts';
import {
  newestFirstListerBy,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  nullableDate,
  nullableJsonObject,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface Verification {
  id: string;
  organizationId: string;
  customerId: string;
  status: VerificationStatus;
  reason: VerificationReason | null;
  submission: VerificationSubmission;
  /** The screening of the submitted names: list version and hits (JSON-safe). */
  screening: { readonly [key: string]: EvidenceValue } | null;
  /** `sandbox_provider`, or the API key of the operator who decided. */
  decidedBy: string | null;
  /** When a deferred sandbox decision is due. */
  decideAt: Date | null;
  createdAt: Date;
  decidedAt: Date | null;
}

const VERIFICATIONS = recordTable<Verification>('verifications', ID_PREFIXES.verification, {
  id: String,
  organizationId: String,
  customerId: String,
  status: stored,
  reason: stored,
  submission: toJsonObject<VerificationSubmission>,
  screening: nullableJsonObject,
  decidedBy: nullableText,
  decideAt: nullableDate,
  createdAt: toDate,
  decidedAt: nullableDate,
});
const { columns: COLUMNS, fromRow } = VERIFICATIONS;

export async function insertVerification(db: Queryable, v: Verification): Promise<void> {
  await db.query(
    `INSERT INTO verifications (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11)`,
    [
      v.id,
      v.organizationId,
      v.customerId,
      v.status,
      v.reason,
      JSON.stringify(v.submission),
      v.screening === null ? null : JSON.stringify(v.screening),
      v.decidedBy,
      v.decideAt,
      v.createdAt,
      v.decidedAt,
    ],
  );
}

export async function saveVerificationDecision(db: Queryable, v: Verification): Promise<void> {
  await db.query(
    'UPDATE verifications SET status = $2, reason = $3, decided_by = $4, decide_at = $5, decided_at = $6 WHERE id = $1',
    [v.id, v.status, v.reason, v.decidedBy, v.decideAt, v.decidedAt],
  );
}

export const findVerification = organizationRecordFinder(VERIFICATIONS);

/** A customer's verifications, newest first. */
export const listVerifications = newestFirstListerBy(VERIFICATIONS, ['organization_id', 'customer_id']);

/** Deferred decisions that are due, oldest first, claimed so that two workers never take the same one. */
export async function claimDueVerifications(
  db: Queryable,
  now: Date,
  rowsMax: number,
): Promise<Verification[]> {
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM verifications
      WHERE status = 'pending' AND decide_at IS NOT NULL AND decide_at <= $1
      ORDER BY decide_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, rowsMax],
  );
  return rows.map(fromRow);
}

/**
 * The country of a customer's latest verified identity: an individual's address, a business's country of
 * registration; null when the customer has no verified verification.
 */
export async function findVerifiedCountry(
  db: Queryable,
  organizationId: string,
  customerId: string,
): Promise<string | null> {
  const [row] = await db.query(
    `SELECT coalesce(submission->'address'->>'country', submission->>'country') AS country
       FROM verifications
      WHERE organization_id = $1 AND customer_id = $2 AND status = 'verified'
      ORDER BY id DESC LIMIT 1`,
    [organizationId, customerId],
  );
  return row?.country === null || row?.country === undefined ? null : String(row.country);
}
