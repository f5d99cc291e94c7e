/**
 * The closing balances trust accounts' statements report, a figure per account and day; a corrected figure
 * supersedes the one it replaces.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { column, computed, rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { type KeysetFilter, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { SafeguardingBalance } from '../domain/safeguarding.ts';

const BALANCE_COLUMNS = `id, organization_id, trust_account_id, currency, balance_date::text AS balance_date,
  closing_balance_minor, status, replaces_id, note, created_by, created_at, source_config_id, source_query_id,
  source_read_at`;

const balanceFromRow = rowMapper<SafeguardingBalance>({
  id: String,
  organizationId: String,
  trustAccountId: String,
  currency: stored,
  date: column('balance_date', String),
  closingBalanceMinor: toBigInt,
  status: stored,
  replacesId: nullableText,
  note: nullableText,
  createdBy: String,
  createdAt: toDate,
  source: computed((row) =>
    row.source_config_id === null || row.source_config_id === undefined
      ? null
      : {
          configId: String(row.source_config_id),
          queryId: String(row.source_query_id),
          readAt: toDate(row.source_read_at),
        },
  ),
});

const BALANCES: RecordTable<SafeguardingBalance> = {
  name: 'safeguarding_balances',
  columns: BALANCE_COLUMNS,
  prefix: ID_PREFIXES.safeguardingBalance,
  fromRow: balanceFromRow,
};

export async function insertBalance(db: Queryable, b: SafeguardingBalance): Promise<void> {
  await db.query(
    `INSERT INTO safeguarding_balances (id, organization_id, trust_account_id, currency, balance_date,
       closing_balance_minor, status, replaces_id, note, created_by, created_at, source_config_id,
       source_query_id, source_read_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      b.id,
      b.organizationId,
      b.trustAccountId,
      b.currency,
      b.date,
      b.closingBalanceMinor.toString(),
      b.status,
      b.replacesId,
      b.note,
      b.createdBy,
      b.createdAt,
      b.source?.configId ?? null,
      b.source?.queryId ?? null,
      b.source?.readAt ?? null,
    ],
  );
}

export async function supersedeBalance(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE safeguarding_balances SET status = 'superseded' WHERE id = $1", [id]);
}

/** The current figures of these accounts for a day (safeguarding_balances_current_idx). */
export async function currentBalances(
  db: Queryable,
  trustAccountIds: readonly string[],
  day: string,
): Promise<SafeguardingBalance[]> {
  if (trustAccountIds.length === 0) return [];
  const rows = await db.query(
    `SELECT ${BALANCE_COLUMNS} FROM safeguarding_balances
      WHERE trust_account_id = ANY($1::text[]) AND balance_date = $2 AND status = 'current'`,
    [[...trustAccountIds], day],
  );
  return rows.map(balanceFromRow);
}

export const findBalance = organizationRecordFinder(BALANCES);

export interface BalanceFilter extends KeysetFilter {
  trustAccountId?: string | undefined;
}

export const listBalances = newestFirstLister(BALANCES, byFields<BalanceFilter>('trustAccountId'));
