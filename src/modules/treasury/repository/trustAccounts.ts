/**
 * Trust accounts: the bank (or custodian) accounts an organization holds customer money in, per currency,
 * with the locks the safeguarding check, balance reports and closings take on them.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordTable,
} from '../../../store/repositories/records.ts';
import { castToText, stored } from '../../../store/repositories/rowMappers.ts';
import { type KeysetFilter, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { TrustAccount, TrustAccountStatus, TrustAccountType } from '../domain/safeguarding.ts';

const TRUST_ACCOUNTS = recordTable<TrustAccount>('trust_accounts', ID_PREFIXES.trustAccount, {
  id: String,
  organizationId: String,
  currency: stored,
  type: stored,
  bank: String,
  accountReference: String,
  status: stored,
  activeFrom: castToText('active_from', String),
  closedOn: castToText('closed_on', nullableText),
  createdAt: toDate,
  updatedAt: toDate,
});

/** False when the organization already has an active account with this bank and reference. */
export async function insertTrustAccount(db: Queryable, a: TrustAccount): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO trust_accounts (id, organization_id, currency, type, bank, account_reference, status, active_from,
       closed_on, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING RETURNING id`,
    [
      a.id,
      a.organizationId,
      a.currency,
      a.type,
      a.bank,
      a.accountReference,
      a.status,
      a.activeFrom,
      a.closedOn,
      a.createdAt,
      a.updatedAt,
    ],
  );
  return inserted.length === 1;
}

export async function closeTrustAccount(db: Queryable, a: TrustAccount): Promise<void> {
  await db.query(
    'UPDATE trust_accounts SET status = $3, closed_on = $4, updated_at = $5 WHERE organization_id = $1 AND id = $2',
    [a.organizationId, a.id, a.status, a.closedOn, a.updatedAt],
  );
}

export const findTrustAccount = organizationRecordFinder(TRUST_ACCOUNTS);

/**
 * Locks every trust account of an organization in a currency, in id order, and returns them. Reporting a
 * balance, closing an account and the daily check each take these locks first, so a report is never
 * written from balances that another transaction is changing.
 */
export async function lockTrustAccounts(
  db: Queryable,
  organizationId: string,
  currency: Currency,
): Promise<TrustAccount[]> {
  const rows = await db.query(
    `SELECT ${TRUST_ACCOUNTS.columns} FROM trust_accounts WHERE organization_id = $1 AND currency = $2 ORDER BY id FOR UPDATE`,
    [organizationId, currency],
  );
  return rows.map(TRUST_ACCOUNTS.fromRow);
}

/** Every trust account of an organization (an organization has a handful), for the daily check. */
export async function trustAccountsOf(db: Queryable, organizationId: string): Promise<TrustAccount[]> {
  const rows = await db.query(
    `SELECT ${TRUST_ACCOUNTS.columns} FROM trust_accounts WHERE organization_id = $1 ORDER BY id DESC`,
    [organizationId],
  );
  return rows.map(TRUST_ACCOUNTS.fromRow);
}

export interface TrustAccountFilter extends KeysetFilter {
  currency?: Currency | undefined;
  status?: TrustAccountStatus | undefined;
  type?: TrustAccountType | undefined;
}

export const listTrustAccounts = newestFirstLister(
  TRUST_ACCOUNTS,
  byFields<TrustAccountFilter>('currency', 'status', 'type'),
);

/**
 * Organizations with a trust account after `afterId`, in id order: the ones the daily check covers, a page
 * at a time (trust_accounts_organization_idx gives each organization's first row).
 */
export async function organizationsWithTrustAccounts(
  db: Queryable,
  afterId: string | undefined,
  rowsMax: number,
): Promise<string[]> {
  const rows = await db.query(
    `SELECT DISTINCT organization_id FROM trust_accounts WHERE organization_id > $1 ORDER BY organization_id LIMIT $2`,
    [afterId ?? '', rowsMax],
  );
  return rows.map((r) => String(r.organization_id));
}
