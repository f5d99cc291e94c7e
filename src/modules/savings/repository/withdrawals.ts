/** Withdrawal notices and withdrawals from savings accounts. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { organizationRecordFinder, recordTable } from '../../../store/repositories/records.ts';
import { castToText, stored } from '../../../store/repositories/rowMappers.ts';
import { toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { NoticeFacts } from '../domain.ts';

export interface SavingsNotice extends NoticeFacts {
  organizationId: string;
  walletId: string;
  givenOn: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SavingsWithdrawal {
  id: string;
  organizationId: string;
  walletId: string;
  destinationWalletId: string;
  amountMinor: bigint;
  penaltyMinor: bigint;
  noticeId: string | null;
  day: string;
  entryId: string;
  createdAt: Date;
}

const NOTICES = recordTable<SavingsNotice>('savings_notices', ID_PREFIXES.savingsNotice, {
  id: String,
  organizationId: String,
  walletId: String,
  amountMinor: toBigInt,
  givenOn: castToText('given_on', String),
  availableOn: castToText('available_on', String),
  status: stored,
  createdAt: toDate,
  updatedAt: toDate,
});

export async function insertSavingsNotice(db: Queryable, n: SavingsNotice): Promise<void> {
  await db.query(
    `INSERT INTO savings_notices (id, organization_id, wallet_id, amount_minor, given_on, available_on, status,
       created_at, updated_at) VALUES ($1, $2, $3, $4, $5::date, $6::date, $7, $8, $9)`,
    [
      n.id,
      n.organizationId,
      n.walletId,
      n.amountMinor.toString(),
      n.givenOn,
      n.availableOn,
      n.status,
      n.createdAt,
      n.updatedAt,
    ],
  );
}

export const findSavingsNotice = organizationRecordFinder(NOTICES);

export async function listSavingsNotices(
  db: Queryable,
  organizationId: string,
  walletId: string,
  limit: number,
): Promise<SavingsNotice[]> {
  const rows = await db.query(
    `SELECT ${NOTICES.columns} FROM savings_notices WHERE organization_id = $1 AND wallet_id = $2
      ORDER BY id DESC LIMIT $3`,
    [organizationId, walletId, limit],
  );
  return rows.map(NOTICES.fromRow);
}

export async function updateSavingsNoticeStatus(
  db: Queryable,
  id: string,
  status: SavingsNotice['status'],
  now: Date,
): Promise<void> {
  await db.query('UPDATE savings_notices SET status = $2, updated_at = $3 WHERE id = $1', [id, status, now]);
}

export async function insertSavingsWithdrawal(db: Queryable, w: SavingsWithdrawal): Promise<void> {
  await db.query(
    `INSERT INTO savings_withdrawals (id, organization_id, wallet_id, destination_wallet_id, amount_minor,
       penalty_minor, notice_id, day, entry_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9, $10)`,
    [
      w.id,
      w.organizationId,
      w.walletId,
      w.destinationWalletId,
      w.amountMinor.toString(),
      w.penaltyMinor.toString(),
      w.noticeId,
      w.day,
      w.entryId,
      w.createdAt,
    ],
  );
}
