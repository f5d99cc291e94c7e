/** Sweeps out of wallets' custody vault accounts: made, found open, moved on. */

import type { Currency } from '../../../domain/money.ts';
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import { nullableDate, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export const CUSTODY_SWEEP_STATUSES = ['pending', 'submitted', 'completed', 'failed'] as const;
export type CustodySweepStatus = (typeof CUSTODY_SWEEP_STATUSES)[number];

export interface CustodySweep {
  /** Also the partner transaction's externalTxId. */
  id: string;
  organizationId: string;
  configId: string;
  vaultAccountId: string;
  assetId: string;
  currency: Currency;
  amountMinor: bigint;
  status: CustodySweepStatus;
  partnerTransactionId: string | null;
  failureCode: string | null;
  /** The trust ledger's sweep recorded once it completed. */
  safeguardingSweepId: string | null;
  /** The asset wallet's sweeps failed in a row up to this one, this one counted: 1 after a success. */
  attempt: number;
  /** A failed sweep's asset wallet is not swept again before this. */
  retryAfter: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const SWEEPS = rowTable<CustodySweep>('custody_sweeps', {
  id: String,
  organizationId: String,
  configId: String,
  vaultAccountId: String,
  assetId: String,
  currency: stored,
  amountMinor: toBigInt,
  status: stored,
  partnerTransactionId: nullableText,
  failureCode: nullableText,
  safeguardingSweepId: nullableText,
  attempt: Number,
  retryAfter: nullableDate,
  createdAt: toDate,
  updatedAt: toDate,
});

/** Inserts the sweep unless its asset wallet has an open one already; whether it was inserted. */
export async function insertSweepIfNoneOpen(db: Queryable, s: CustodySweep): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO custody_sweeps (${SWEEPS.columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (config_id, vault_account_id, asset_id) WHERE status IN ('pending', 'submitted') DO NOTHING
     RETURNING id`,
    [
      s.id,
      s.organizationId,
      s.configId,
      s.vaultAccountId,
      s.assetId,
      s.currency,
      s.amountMinor.toString(),
      s.status,
      s.partnerTransactionId,
      s.failureCode,
      s.safeguardingSweepId,
      s.attempt,
      s.retryAfter,
      s.createdAt,
      s.updatedAt,
    ],
  );
  return rows.length === 1;
}

/** The configuration's open sweeps (pending or submitted), oldest first. */
export async function openSweepsOf(db: Queryable, configId: string, limit: number): Promise<CustodySweep[]> {
  const rows = await db.query(
    `SELECT ${SWEEPS.columns} FROM custody_sweeps WHERE config_id = $1 AND status IN ('pending', 'submitted')
      ORDER BY id LIMIT $2`,
    [configId, limit],
  );
  return rows.map(SWEEPS.fromRow);
}

const findSweep = recordFinderBy(SWEEPS, 'id');

/** A sweep locked until the transaction ends. */
export const lockSweep = (db: Queryable, id: string): Promise<CustodySweep | undefined> =>
  findSweep(db, id, { forUpdate: true });

/** Records a sweep's new status, its partner transaction, failure and trust ledger sweep. */
export async function saveSweep(db: Queryable, s: CustodySweep): Promise<void> {
  await db.query(
    `UPDATE custody_sweeps SET status = $2, partner_transaction_id = $3, failure_code = $4,
       safeguarding_sweep_id = $5, retry_after = $6, updated_at = $7 WHERE id = $1`,
    [s.id, s.status, s.partnerTransactionId, s.failureCode, s.safeguardingSweepId, s.retryAfter, s.updatedAt],
  );
}

/** How many failed sweeps of the asset wallet came last in a row (0 when its latest did not fail, or none). */
export async function failuresInARow(
  db: Queryable,
  configId: string,
  vaultAccountId: string,
  assetId: string,
): Promise<number> {
  const [row] = await db.query(
    `SELECT status, attempt FROM custody_sweeps WHERE config_id = $1 AND vault_account_id = $2 AND asset_id = $3
      ORDER BY created_at DESC LIMIT 1`,
    [configId, vaultAccountId, assetId],
  );
  return row?.status === 'failed' ? Number(row.attempt) : 0;
}

/** The asset wallets (`vault\u0000asset`) whose last sweep failed and whose wait has not ended at `now`. */
export async function waitingAssetWallets(db: Queryable, configId: string, now: Date): Promise<Set<string>> {
  const rows = await db.query(
    `SELECT DISTINCT vault_account_id, asset_id FROM custody_sweeps
      WHERE config_id = $1 AND status = 'failed' AND retry_after IS NOT NULL AND retry_after > $2`,
    [configId, now],
  );
  return new Set(rows.map((r) => `${String(r.vault_account_id)}\u0000${String(r.asset_id)}`));
}
