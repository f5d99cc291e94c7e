/** Savings accounts (wallets of a product): their rows, and the reads and writes of the daily accrual. */

import { prepared } from '../../../store/preparedStatements.ts';
import { organizationRecordFinder, rowTable } from '../../../store/repositories/records.ts';
import { castToText } from '../../../store/repositories/rowMappers.ts';
import { fieldArrays, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface SavingsAccount {
  walletId: string;
  organizationId: string;
  productId: string;
  openedOn: string;
  maturesOn: string | null;
  accruedThrough: string;
  accruedParts: bigint;
  payableMinor: bigint;
  interestPaidMinor: bigint;
  createdAt: Date;
  updatedAt: Date;
}

const ACCOUNTS = rowTable<SavingsAccount>('savings_accounts', {
  walletId: String,
  organizationId: String,
  productId: String,
  openedOn: castToText('opened_on', String),
  maturesOn: castToText('matures_on', nullableText),
  accruedThrough: castToText('accrued_through', String),
  accruedParts: toBigInt,
  payableMinor: toBigInt,
  interestPaidMinor: toBigInt,
  createdAt: toDate,
  updatedAt: toDate,
});

export async function insertSavingsAccount(db: Queryable, a: SavingsAccount): Promise<void> {
  await db.query(
    `INSERT INTO savings_accounts (wallet_id, organization_id, product_id, opened_on, matures_on, accrued_through,
       accrued_parts, payable_minor, interest_paid_minor, created_at, updated_at)
     VALUES ($1, $2, $3, $4::date, $5::date, $6::date, $7, $8, $9, $10, $11)`,
    [
      a.walletId,
      a.organizationId,
      a.productId,
      a.openedOn,
      a.maturesOn,
      a.accruedThrough,
      a.accruedParts.toString(),
      a.payableMinor.toString(),
      a.interestPaidMinor.toString(),
      a.createdAt,
      a.updatedAt,
    ],
  );
}

/** The organization's savings account of a wallet (`forUpdate`: locked until the transaction ends). */
export const findSavingsAccount = organizationRecordFinder(ACCOUNTS, 'wallet_id');

/** One wallet (a movement's source) by a statement of fixed arity, whose plan PostgreSQL keeps. */
const SAVINGS_WALLET_ID_SQL = prepared('SELECT wallet_id FROM savings_accounts WHERE wallet_id = $1');

/** Which of these wallets are savings accounts. */
export async function savingsWalletIds(db: Queryable, walletIds: readonly string[]): Promise<Set<string>> {
  if (walletIds.length === 0) return new Set();
  const rows =
    walletIds.length === 1
      ? await db.query(SAVINGS_WALLET_ID_SQL, walletIds)
      : await db.query('SELECT wallet_id FROM savings_accounts WHERE wallet_id = ANY($1::text[])', [
          walletIds,
        ]);
  return new Set(rows.map((r) => String(r.wallet_id)));
}

export async function listSavingsAccounts(
  db: Queryable,
  organizationId: string,
  filter: { productId?: string | undefined; startingAfter?: string | undefined },
  limit: number,
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNTS.columns} FROM savings_accounts
      WHERE organization_id = $1 AND ($2::text IS NULL OR product_id = $2) AND ($3::text IS NULL OR wallet_id < $3)
      ORDER BY wallet_id DESC LIMIT $4`,
    [organizationId, filter.productId ?? null, filter.startingAfter ?? null, limit],
  );
  return rows.map(ACCOUNTS.fromRow);
}

/**
 * Up to `limit` of the organization's accounts with a day before `throughDay` not accrued yet, after `after`
 * in id order: the accrual pages through them. A closed wallet's account accrues no more (it holds nothing).
 */
export async function savingsAccountsDue(
  db: Queryable,
  organizationId: string,
  throughDay: string,
  after: string | undefined,
  limit: number,
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNTS.columns} FROM savings_accounts a
      WHERE a.organization_id = $1 AND a.accrued_through < $2::date AND ($3::text IS NULL OR a.wallet_id > $3)
        AND NOT EXISTS (SELECT 1 FROM wallets w WHERE w.id = a.wallet_id AND w.status = 'closed')
      ORDER BY a.wallet_id LIMIT $4`,
    [organizationId, throughDay, after ?? null, limit],
  );
  return rows.map(ACCOUNTS.fromRow);
}

/** Locks these accounts (in id order, so two passes never deadlock) and reads them as they now stand. */
export async function lockSavingsAccounts(
  db: Queryable,
  walletIds: readonly string[],
): Promise<SavingsAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNTS.columns} FROM savings_accounts WHERE wallet_id = ANY($1::text[]) ORDER BY wallet_id FOR UPDATE`,
    [walletIds],
  );
  return rows.map(ACCOUNTS.fromRow);
}

/** Organizations with savings accounts, in id order after `after`. */
export async function organizationsWithSavings(
  db: Queryable,
  after: string | undefined,
  limit: number,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT DISTINCT organization_id FROM savings_accounts
      WHERE ($1::text IS NULL OR organization_id > $1) ORDER BY organization_id LIMIT $2`,
    [after ?? null, limit],
  );
  return rows.map((r) => String(r.organization_id));
}

export async function updateSavingsAccounts(
  db: Queryable,
  accounts: readonly SavingsAccount[],
): Promise<void> {
  if (accounts.length === 0) return;
  await db.query(
    `UPDATE savings_accounts a
        SET accrued_through = u.accrued_through, accrued_parts = u.accrued_parts, payable_minor = u.payable_minor,
            interest_paid_minor = u.interest_paid_minor, updated_at = u.updated_at
       FROM unnest($1::text[], $2::date[], $3::bigint[], $4::bigint[], $5::bigint[], $6::timestamptz[])
            AS u (wallet_id, accrued_through, accrued_parts, payable_minor, interest_paid_minor, updated_at)
      WHERE a.wallet_id = u.wallet_id`,
    [
      ...fieldArrays(accounts, 'walletId', 'accruedThrough'),
      accounts.map((a) => a.accruedParts.toString()),
      accounts.map((a) => a.payableMinor.toString()),
      accounts.map((a) => a.interestPaidMinor.toString()),
      accounts.map((a) => a.updatedAt.toISOString()),
    ],
  );
}
