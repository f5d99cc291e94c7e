/** Queries of a rail partner's own account balances: stored, found by the partner's reference, listed. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import type { PartnerAccountBalance } from '../../../rails/balances.ts';
import {
  newestFirstLister,
  organizationRecordFinder,
  recordFinderBy,
  recordTable,
} from '../../../store/repositories/records.ts';
import { stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableDate,
  nullableText,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export const BALANCE_QUERY_STATUSES = ['requested', 'reported', 'failed'] as const;
export type BalanceQueryStatus = (typeof BALANCE_QUERY_STATUSES)[number];

export interface BalanceQuery {
  id: string;
  organizationId: string;
  configId: string;
  partner: string;
  status: BalanceQueryStatus;
  /** The partner's reference its result callback names; null for a partner that answered at once. */
  partnerReference: string | null;
  /** The accounts as reported; null until then. */
  accounts: PartnerAccountBalance[] | null;
  failureCode: string | null;
  /** Who asked: the member, or the key acting for no member. */
  requestedBy: string;
  createdAt: Date;
  reportedAt: Date | null;
}

/** Accounts as stored: amounts as decimal strings of minor units (JSON has no bigint). */
interface StoredAccount {
  account: string;
  currency: Currency;
  available_minor: string;
  current_minor: string | null;
}

function accountsToStored(accounts: PartnerAccountBalance[] | null): string | null {
  if (accounts === null) return null;
  const stored: StoredAccount[] = accounts.map((a) => ({
    account: a.account,
    currency: a.currency,
    available_minor: a.availableMinor.toString(),
    current_minor: a.currentMinor === null ? null : a.currentMinor.toString(),
  }));
  return JSON.stringify(stored);
}

function accountsFromStored(value: unknown): PartnerAccountBalance[] | null {
  if (value === null || value === undefined) return null;
  return toJsonObject<StoredAccount[]>(value).map((a) => ({
    account: a.account,
    currency: a.currency,
    availableMinor: BigInt(a.available_minor),
    currentMinor: a.current_minor === null ? null : BigInt(a.current_minor),
  }));
}

const QUERIES = recordTable<BalanceQuery>('rail_partner_balance_queries', ID_PREFIXES.railBalanceQuery, {
  id: String,
  organizationId: String,
  configId: String,
  partner: String,
  status: stored,
  partnerReference: nullableText,
  accounts: accountsFromStored,
  failureCode: nullableText,
  requestedBy: String,
  createdAt: toDate,
  reportedAt: nullableDate,
});

export async function insertBalanceQuery(db: Queryable, q: BalanceQuery): Promise<void> {
  await db.query(
    `INSERT INTO rail_partner_balance_queries (${QUERIES.columns})
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11)`,
    [
      q.id,
      q.organizationId,
      q.configId,
      q.partner,
      q.status,
      q.partnerReference,
      accountsToStored(q.accounts),
      q.failureCode,
      q.requestedBy,
      q.createdAt,
      q.reportedAt,
    ],
  );
}

/** Records a query's result. */
export async function saveBalanceQueryResult(db: Queryable, q: BalanceQuery): Promise<void> {
  await db.query(
    `UPDATE rail_partner_balance_queries SET status = $2, accounts = $3::jsonb, failure_code = $4, reported_at = $5
      WHERE id = $1`,
    [q.id, q.status, accountsToStored(q.accounts), q.failureCode, q.reportedAt],
  );
}

const findByReference = recordFinderBy(QUERIES, 'config_id', 'partner_reference');

/** The query a partner's result names, locked until the transaction ends. */
export const lockBalanceQueryByReference = (
  db: Queryable,
  configId: string,
  partnerReference: string,
): Promise<BalanceQuery | undefined> => findByReference(db, configId, partnerReference, { forUpdate: true });

export const findBalanceQuery = organizationRecordFinder(QUERIES);

export interface BalanceQueryFilter extends KeysetFilter {
  configId: string;
}

/** A partner configuration's queries, newest first. */
export const listBalanceQueries = newestFirstLister(QUERIES, (filter: BalanceQueryFilter) => [
  ['config_id', filter.configId],
]);
