/** Stablecoin deposits seen on chain: recorded once per chain transfer, saved as they move, claimed by the deposit worker. */
import type { DigitalAssetNetwork } from '../../../domain/digitalAssets.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Deposit, DepositStatus } from '../../../domain/stablecoins.ts';
import {
  byStatusAndWallet,
  dueRecordsClaimer,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  forUpdateClause,
  nullableBoolean,
  nullableDate,
  nullableText,
  toBigInt,
  toDate,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const DEPOSITS = recordTable<Deposit>('deposits', ID_PREFIXES.deposit, {
  id: String,
  organizationId: String,
  walletId: String,
  depositAddressId: String,
  asset: stored,
  network: stored,
  address: String,
  txHash: String,
  logIndex: Number,
  amountMinor: toBigInt,
  confirmations: Number,
  chainState: stored,
  requiredConfirmations: Number,
  status: stored,
  transferId: nullableText,
  travelRuleEvidenceId: nullableText,
  travelRuleRequired: nullableBoolean,
  nextCheckAt: nullableDate,
  createdAt: toDate,
  updatedAt: toDate,
  creditedAt: nullableDate,
  reorgedAt: nullableDate,
  travelRuleReceived: nullableBoolean,
  heldAt: nullableDate,
  rejectedAt: nullableDate,
});

/**
 * Records a deposit unless the chain transfer (network, hash, log index) is already a live deposit: the
 * unique index decides, so a notification repeated at the same moment in two processes records one.
 * Returns the new deposit, or undefined when it was there already.
 */
export async function insertDepositIfNew(db: Queryable, d: Deposit): Promise<Deposit | undefined> {
  const [row] = await db.query(
    `INSERT INTO deposits (${DEPOSITS.columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
             $23, $24, $25)
     ON CONFLICT (network, tx_hash, log_index) WHERE status <> 'reorged' DO NOTHING
     RETURNING ${DEPOSITS.columns}`,
    [
      d.id,
      d.organizationId,
      d.walletId,
      d.depositAddressId,
      d.asset,
      d.network,
      d.address,
      d.txHash,
      d.logIndex,
      d.amountMinor.toString(),
      d.confirmations,
      d.chainState,
      d.requiredConfirmations,
      d.status,
      d.transferId,
      d.travelRuleEvidenceId,
      d.travelRuleRequired,
      d.nextCheckAt,
      d.createdAt,
      d.updatedAt,
      d.creditedAt,
      d.reorgedAt,
      d.travelRuleReceived,
      d.heldAt,
      d.rejectedAt,
    ],
  );
  return row && DEPOSITS.fromRow(row);
}

export async function saveDeposit(db: Queryable, d: Deposit): Promise<void> {
  await db.query(
    `UPDATE deposits SET confirmations = $3, chain_state = $4, status = $5, transfer_id = $6, next_check_at = $7,
       updated_at = $8, credited_at = $9, reorged_at = $10, travel_rule_evidence_id = $11, travel_rule_required = $12,
       travel_rule_received = $13, held_at = $14, rejected_at = $15
     WHERE organization_id = $1 AND id = $2`,
    [
      d.organizationId,
      d.id,
      d.confirmations,
      d.chainState,
      d.status,
      d.transferId,
      d.nextCheckAt,
      d.updatedAt,
      d.creditedAt,
      d.reorgedAt,
      d.travelRuleEvidenceId,
      d.travelRuleRequired,
      d.travelRuleReceived,
      d.heldAt,
      d.rejectedAt,
    ],
  );
}

export const findDeposit = organizationRecordFinder(DEPOSITS);

/** The live deposit of a chain transfer (not a reorged one), locked when asked. */
export async function findDepositByChainTransfer(
  db: Queryable,
  network: DigitalAssetNetwork,
  txHash: string,
  logIndex: number,
  options: { forUpdate?: boolean } = {},
): Promise<Deposit | undefined> {
  const [row] = await db.query(
    `SELECT ${DEPOSITS.columns} FROM deposits
      WHERE network = $1 AND tx_hash = $2 AND log_index = $3 AND status <> 'reorged'${forUpdateClause(options.forUpdate)}`,
    [network, txHash, logIndex],
  );
  return row && DEPOSITS.fromRow(row);
}

/** The organization's pending deposits on a network, locked (the simulated chain advancing). */
export async function lockPendingDeposits(
  db: Queryable,
  organizationId: string,
  network: DigitalAssetNetwork,
): Promise<Deposit[]> {
  const rows = await db.query(
    `SELECT ${DEPOSITS.columns} FROM deposits
      WHERE organization_id = $1 AND network = $2 AND status = 'pending' ORDER BY id FOR UPDATE`,
    [organizationId, network],
  );
  return rows.map(DEPOSITS.fromRow);
}

/** Due deposits, claimed: skipped by any other worker until this transaction ends. */
export const claimDueDeposits = dueRecordsClaimer(DEPOSITS);

export const listDeposits = newestFirstLister(DEPOSITS, byStatusAndWallet<DepositStatus>);
