/** Reversals of settled partner payouts: one per transfer, found by the partner's ids, claimed by the worker. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  dueRecordsClaimer,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { forUpdateClause, nullableDate, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export const RAIL_REVERSAL_STATUSES = ['requested', 'sent', 'succeeded', 'refused'] as const;
export type RailReversalStatus = (typeof RAIL_REVERSAL_STATUSES)[number];

export interface RailReversal {
  id: string;
  organizationId: string;
  transferId: string;
  configId: string;
  partner: string;
  status: RailReversalStatus;
  /** Why the operator asked, as they wrote it. */
  reason: string;
  /** Who asked: the member, or the key acting for no member. */
  requestedBy: string;
  /** The partner's receipt of the payout being reversed. */
  originalTransactionId: string;
  /** The partner's id for the reversal, once it acknowledged the request. */
  partnerReference: string | null;
  /** The partner's receipt of the reversal, once it succeeded. */
  partnerTransactionId: string | null;
  failureCode: string | null;
  nextCheckAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const REVERSALS = recordTable<RailReversal>('rail_reversals', ID_PREFIXES.railReversal, {
  id: String,
  organizationId: String,
  transferId: String,
  configId: String,
  partner: String,
  status: stored,
  reason: String,
  requestedBy: String,
  originalTransactionId: String,
  partnerReference: nullableText,
  partnerTransactionId: nullableText,
  failureCode: nullableText,
  nextCheckAt: nullableDate,
  createdAt: toDate,
  updatedAt: toDate,
});

/** Stores a new reversal; false when the transfer already has one (the first stands). */
export async function insertRailReversal(db: Queryable, r: RailReversal): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO rail_reversals (id, organization_id, transfer_id, config_id, partner, status, reason, requested_by,
       original_transaction_id, partner_reference, partner_transaction_id, failure_code, next_check_at, created_at,
       updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (transfer_id) DO NOTHING RETURNING id`,
    [
      r.id,
      r.organizationId,
      r.transferId,
      r.configId,
      r.partner,
      r.status,
      r.reason,
      r.requestedBy,
      r.originalTransactionId,
      r.partnerReference,
      r.partnerTransactionId,
      r.failureCode,
      r.nextCheckAt,
      r.createdAt,
      r.updatedAt,
    ],
  );
  return rows.length === 1;
}

/** Writes what changes on a reversal: its status, the partner's ids, the failure and the next check. */
export async function saveRailReversal(db: Queryable, r: RailReversal): Promise<void> {
  await db.query(
    `UPDATE rail_reversals SET status = $2, partner_reference = $3, partner_transaction_id = $4, failure_code = $5,
       next_check_at = $6, updated_at = $7
     WHERE id = $1`,
    [r.id, r.status, r.partnerReference, r.partnerTransactionId, r.failureCode, r.nextCheckAt, r.updatedAt],
  );
}

export const findRailReversal = organizationRecordFinder(REVERSALS);
export const findRailReversalOfTransfer = organizationRecordFinder(REVERSALS, 'transfer_id');

/** The reversal a partner's result names: by the partner's reference, else by the payout's receipt. */
export async function findRailReversalByPartnerIds(
  db: Queryable,
  configId: string,
  ids: { reference: string; originalTransactionId?: string | undefined },
  options: { forUpdate?: boolean } = {},
): Promise<RailReversal | undefined> {
  const [row] = await db.query(
    `SELECT ${REVERSALS.columns} FROM rail_reversals
     WHERE config_id = $1 AND (partner_reference = $2 OR original_transaction_id = $3)
     ORDER BY (partner_reference = $2) DESC NULLS LAST LIMIT 1${forUpdateClause(options.forUpdate)}`,
    [configId, ids.reference, ids.originalTransactionId ?? null],
  );
  return row && REVERSALS.fromRow(row);
}

export const claimDueRailReversals = dueRecordsClaimer(REVERSALS);
