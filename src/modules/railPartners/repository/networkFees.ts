/** Network fees custody partners reported paid for our transactions: one row per partner transaction. */

import type { Currency } from '../../../domain/money.ts';
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { nullableBigInt, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export type NetworkFeeSubject = 'payout' | 'sweep';

export interface CustodyNetworkFee {
  id: string;
  organizationId: string;
  partner: string;
  partnerTransactionId: string;
  subjectType: NetworkFeeSubject;
  /** The transfer (a payout) or the custody sweep whose transaction paid it. */
  subjectId: string;
  /** The partner's id of the asset that paid it, and the amount as the partner wrote it. */
  feeAsset: string;
  feeAmount: string;
  /** Set when the asset is a ledger currency: then `journalEntryId` books it; else `exceptionId` holds it. */
  currency: Currency | null;
  amountMinor: bigint | null;
  journalEntryId: string | null;
  exceptionId: string | null;
  createdAt: Date;
}

const FEES = rowTable<CustodyNetworkFee>('custody_network_fees', {
  id: String,
  organizationId: String,
  partner: String,
  partnerTransactionId: String,
  subjectType: stored,
  subjectId: String,
  feeAsset: String,
  feeAmount: String,
  currency: stored,
  amountMinor: nullableBigInt,
  journalEntryId: nullableText,
  exceptionId: nullableText,
  createdAt: toDate,
});

/** The fee recorded for a partner transaction, if any. */
export const findNetworkFee = recordFinderBy(FEES, 'organization_id', 'partner', 'partner_transaction_id');

/** The fees a transfer's or sweep's transactions paid. */
export async function networkFeesOf(db: Queryable, subjectId: string): Promise<CustodyNetworkFee[]> {
  const rows = await db.query(
    `SELECT ${FEES.columns} FROM custody_network_fees WHERE subject_id = $1 ORDER BY id`,
    [subjectId],
  );
  return rows.map(FEES.fromRow);
}

/** Inserts the fee; a second one for the same partner transaction violates the unique index (never booked twice). */
export async function insertNetworkFee(db: Queryable, f: CustodyNetworkFee): Promise<void> {
  await db.query(
    `INSERT INTO custody_network_fees (${FEES.columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      f.id,
      f.organizationId,
      f.partner,
      f.partnerTransactionId,
      f.subjectType,
      f.subjectId,
      f.feeAsset,
      f.feeAmount,
      f.currency,
      f.amountMinor?.toString() ?? null,
      f.journalEntryId,
      f.exceptionId,
      f.createdAt,
    ],
  );
}
