/**
 * Trust accounts, the closing balances their statements report, the daily safeguarding reports, and the
 * ledger figure they are checked against: customer wallet balances as of the end of a day.
 */
import { ID_PREFIXES } from '../../domain/ids.ts';
import type { Currency } from '../../domain/money.ts';
import type {
  ReportedTrustBalance,
  SafeguardingBalance,
  SafeguardingBalanceStatus,
  SafeguardingReportStatus,
  TrustAccount,
  TrustAccountStatus,
  TrustAccountType,
} from '../../domain/safeguarding.ts';
import type { Queryable } from '../store.ts';
import {
  idBoundsOfCreated,
  type KeysetFilter,
  keysetConditions,
  listNewestFirst,
  toBigInt,
  toDate,
} from './rows.ts';

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const nullableMinor = (v: unknown) => (v === null || v === undefined ? null : toBigInt(v));

// ---------------------------------------------------------------------------------------------------------
// Trust accounts

const ACCOUNT_COLUMNS = `id, organization_id, currency, type, bank, account_reference, status,
  active_from::text AS active_from, closed_on::text AS closed_on, created_at, updated_at`;

function accountFromRow(row: Record<string, unknown>): TrustAccount {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    currency: row.currency as Currency,
    type: row.type as TrustAccountType,
    bank: String(row.bank),
    accountReference: String(row.account_reference),
    status: row.status as TrustAccountStatus,
    activeFrom: String(row.active_from),
    closedOn: text(row.closed_on),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

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

export async function findTrustAccount(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<TrustAccount | undefined> {
  const [row] = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM trust_accounts WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row && accountFromRow(row);
}

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
    `SELECT ${ACCOUNT_COLUMNS} FROM trust_accounts WHERE organization_id = $1 AND currency = $2 ORDER BY id FOR UPDATE`,
    [organizationId, currency],
  );
  return rows.map(accountFromRow);
}

/** Every trust account of an organization (an organization has a handful), for the daily check. */
export async function trustAccountsOf(db: Queryable, organizationId: string): Promise<TrustAccount[]> {
  const rows = await db.query(
    `SELECT ${ACCOUNT_COLUMNS} FROM trust_accounts WHERE organization_id = $1 ORDER BY id DESC`,
    [organizationId],
  );
  return rows.map(accountFromRow);
}

export interface TrustAccountFilter extends KeysetFilter {
  currency?: Currency | undefined;
  status?: TrustAccountStatus | undefined;
  type?: TrustAccountType | undefined;
}

export async function listTrustAccounts(
  db: Queryable,
  organizationId: string,
  filter: TrustAccountFilter,
  rowsMax: number,
): Promise<TrustAccount[]> {
  const rows = await listNewestFirst(db, {
    table: 'trust_accounts',
    columns: ACCOUNT_COLUMNS,
    prefix: ID_PREFIXES.trustAccount,
    organizationId,
    filter,
    equal: [
      ['currency', filter.currency],
      ['status', filter.status],
      ['type', filter.type],
    ],
    rowsMax,
  });
  return rows.map(accountFromRow);
}

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

// ---------------------------------------------------------------------------------------------------------
// Closing balances

const BALANCE_COLUMNS = `id, organization_id, trust_account_id, currency, balance_date::text AS balance_date,
  closing_balance_minor, status, replaces_id, note, created_by, created_at`;

function balanceFromRow(row: Record<string, unknown>): SafeguardingBalance {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    trustAccountId: String(row.trust_account_id),
    currency: row.currency as Currency,
    date: String(row.balance_date),
    closingBalanceMinor: toBigInt(row.closing_balance_minor),
    status: row.status as SafeguardingBalanceStatus,
    replacesId: text(row.replaces_id),
    note: text(row.note),
    createdBy: String(row.created_by),
    createdAt: toDate(row.created_at),
  };
}

export async function insertBalance(db: Queryable, b: SafeguardingBalance): Promise<void> {
  await db.query(
    `INSERT INTO safeguarding_balances (id, organization_id, trust_account_id, currency, balance_date,
       closing_balance_minor, status, replaces_id, note, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
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

export async function findBalance(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<SafeguardingBalance | undefined> {
  const [row] = await db.query(
    `SELECT ${BALANCE_COLUMNS} FROM safeguarding_balances WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row && balanceFromRow(row);
}

export interface BalanceFilter extends KeysetFilter {
  trustAccountId?: string | undefined;
}

export async function listBalances(
  db: Queryable,
  organizationId: string,
  filter: BalanceFilter,
  rowsMax: number,
): Promise<SafeguardingBalance[]> {
  const rows = await listNewestFirst(db, {
    table: 'safeguarding_balances',
    columns: BALANCE_COLUMNS,
    prefix: ID_PREFIXES.safeguardingBalance,
    organizationId,
    filter,
    equal: [['trust_account_id', filter.trustAccountId]],
    rowsMax,
  });
  return rows.map(balanceFromRow);
}

// ---------------------------------------------------------------------------------------------------------
// Reports

export interface SafeguardingReport {
  id: string;
  organizationId: string;
  currency: Currency;
  date: string;
  status: SafeguardingReportStatus;
  customerMoneyMinor: bigint;
  trustBalanceMinor: bigint | null;
  differenceMinor: bigint | null;
  trustBalances: ReportedTrustBalance[];
  /** The ledger's trust account as of `asOf` (what it holds); null on reports written before it existed. */
  ledgerTrustBalanceMinor: bigint | null;
  /** The bank-reported trust balance minus the ledger's; null while a balance is missing. */
  ledgerDifferenceMinor: bigint | null;
  /** The instant the ledger was read as of: the end of the day. */
  asOf: Date;
  /** The exception its last shortfall opened. */
  exceptionId: string | null;
  /** The `trust_balance_mismatch` exception its last difference from the ledger opened. */
  mismatchExceptionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const REPORT_COLUMNS = `id, organization_id, currency, report_date::text AS report_date, status, customer_money_minor,
  trust_balance_minor, difference_minor, trust_balances, ledger_trust_balance_minor, ledger_difference_minor, as_of,
  exception_id, mismatch_exception_id, created_at, updated_at`;

interface StoredTrustBalance {
  trust_account: string;
  balance: string | null;
  closing_balance_minor: string | null;
}

function reportFromRow(row: Record<string, unknown>): SafeguardingReport {
  const stored = (
    typeof row.trust_balances === 'string' ? JSON.parse(row.trust_balances) : row.trust_balances
  ) as StoredTrustBalance[];
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    currency: row.currency as Currency,
    date: String(row.report_date),
    status: row.status as SafeguardingReportStatus,
    customerMoneyMinor: toBigInt(row.customer_money_minor),
    trustBalanceMinor: row.trust_balance_minor === null ? null : toBigInt(row.trust_balance_minor),
    differenceMinor: row.difference_minor === null ? null : toBigInt(row.difference_minor),
    trustBalances: stored.map((b) => ({
      trustAccountId: b.trust_account,
      balanceId: b.balance,
      closingBalanceMinor: b.closing_balance_minor === null ? null : BigInt(b.closing_balance_minor),
    })),
    ledgerTrustBalanceMinor: nullableMinor(row.ledger_trust_balance_minor),
    ledgerDifferenceMinor: nullableMinor(row.ledger_difference_minor),
    asOf: toDate(row.as_of),
    exceptionId: text(row.exception_id),
    mismatchExceptionId: text(row.mismatch_exception_id),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function storedTrustBalances(balances: readonly ReportedTrustBalance[]): string {
  return JSON.stringify(
    balances.map(
      (b): StoredTrustBalance => ({
        trust_account: b.trustAccountId,
        balance: b.balanceId,
        closing_balance_minor: b.closingBalanceMinor?.toString() ?? null,
      }),
    ),
  );
}

/** Inserts the day's report; false when the organization, currency and day have one already. */
export async function insertReport(db: Queryable, r: SafeguardingReport): Promise<boolean> {
  const inserted = await db.query(
    `INSERT INTO safeguarding_reports (id, organization_id, currency, report_date, status, customer_money_minor,
       trust_balance_minor, difference_minor, trust_balances, ledger_trust_balance_minor, ledger_difference_minor,
       as_of, exception_id, mismatch_exception_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14, $15, $16)
     ON CONFLICT (organization_id, report_date, currency) DO NOTHING RETURNING id`,
    [
      r.id,
      r.organizationId,
      r.currency,
      r.date,
      r.status,
      r.customerMoneyMinor.toString(),
      r.trustBalanceMinor?.toString() ?? null,
      r.differenceMinor?.toString() ?? null,
      storedTrustBalances(r.trustBalances),
      r.ledgerTrustBalanceMinor?.toString() ?? null,
      r.ledgerDifferenceMinor?.toString() ?? null,
      r.asOf,
      r.exceptionId,
      r.mismatchExceptionId,
      r.createdAt,
      r.updatedAt,
    ],
  );
  return inserted.length === 1;
}

export async function saveReport(db: Queryable, r: SafeguardingReport): Promise<void> {
  await db.query(
    `UPDATE safeguarding_reports SET status = $2, trust_balance_minor = $3, difference_minor = $4,
       trust_balances = $5::jsonb, ledger_difference_minor = $6, exception_id = $7, mismatch_exception_id = $8,
       updated_at = $9 WHERE id = $1`,
    [
      r.id,
      r.status,
      r.trustBalanceMinor?.toString() ?? null,
      r.differenceMinor?.toString() ?? null,
      storedTrustBalances(r.trustBalances),
      r.ledgerDifferenceMinor?.toString() ?? null,
      r.exceptionId,
      r.mismatchExceptionId,
      r.updatedAt,
    ],
  );
}

export async function findReport(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<SafeguardingReport | undefined> {
  const [row] = await db.query(
    `SELECT ${REPORT_COLUMNS} FROM safeguarding_reports WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row && reportFromRow(row);
}

/** The day's report of a currency, locked (the caller holds the currency's trust accounts first). */
export async function lockReportOfDay(
  db: Queryable,
  organizationId: string,
  currency: Currency,
  day: string,
): Promise<SafeguardingReport | undefined> {
  const [row] = await db.query(
    `SELECT ${REPORT_COLUMNS} FROM safeguarding_reports
      WHERE organization_id = $1 AND report_date = $2 AND currency = $3 FOR UPDATE`,
    [organizationId, day, currency],
  );
  return row && reportFromRow(row);
}

/** Which currencies already have a report on each of these days (safeguarding_reports_day_idx). */
export async function reportedDays(
  db: Queryable,
  organizationId: string,
  firstDay: string,
  lastDay: string,
): Promise<Set<string>> {
  const rows = await db.query(
    `SELECT report_date::text AS report_date, currency FROM safeguarding_reports
      WHERE organization_id = $1 AND report_date BETWEEN $2 AND $3`,
    [organizationId, firstDay, lastDay],
  );
  return new Set(rows.map((r) => `${String(r.report_date)}/${String(r.currency)}`));
}

export interface ReportFilter extends KeysetFilter {
  currency?: Currency | undefined;
  status?: SafeguardingReportStatus | undefined;
  dateGte?: string | undefined;
  dateLte?: string | undefined;
}

/**
 * Newest first, like every list. Currency and status are served by their (organization_id, …, id DESC)
 * indexes; a date range by safeguarding_reports_day_idx (a range holds a report per currency and day).
 */
export async function listReports(
  db: Queryable,
  organizationId: string,
  filter: ReportFilter,
  rowsMax: number,
): Promise<SafeguardingReport[]> {
  const params: unknown[] = [organizationId];
  const conditions = [
    'organization_id = $1',
    ...keysetConditions(filter, params, '', ID_PREFIXES.safeguardingReport),
  ];
  const add = (condition: string, value: unknown) => {
    if (value === undefined) return;
    params.push(value);
    conditions.push(`${condition} $${params.length}`);
  };
  add('currency =', filter.currency);
  add('status =', filter.status);
  add('report_date >=', filter.dateGte);
  add('report_date <=', filter.dateLte);
  params.push(rowsMax);
  const rows = await db.query(
    `SELECT ${REPORT_COLUMNS} FROM safeguarding_reports WHERE ${conditions.join(' AND ')}
      ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(reportFromRow);
}

// ---------------------------------------------------------------------------------------------------------
// The ledger's side

/**
 * The first time each currency had a wallet in the organization, for the currencies that have one: one
 * probe per currency into ledger_accounts_wallet_currency_idx, however many wallets there are.
 */
export async function walletCurrenciesSince(
  db: Queryable,
  organizationId: string,
  currencies: readonly Currency[],
): Promise<Map<Currency, Date>> {
  const rows = await db.query(
    `SELECT c.currency,
            (SELECT min(a.created_at) FROM ledger_accounts a
              WHERE a.organization_id = $1 AND a.kind = 'wallet' AND a.currency = c.currency) AS first_at
       FROM unnest($2::text[]) AS c(currency)`,
    [organizationId, [...currencies]],
  );
  const since = new Map<Currency, Date>();
  for (const row of rows) {
    if (row.first_at !== null && row.first_at !== undefined) {
      since.set(row.currency as Currency, toDate(row.first_at));
    }
  }
  return since;
}

/**
 * Customer money in a currency as of `asOf`, exactly, in minor units: the posted balances of every wallet
 * of the organization in that currency, less what entries created at or after `asOf` posted to them. The
 * running sums are current; entries are append-only and stamped, so the past is the present minus what
 * came since, and only the entries since are read (journal_entries_organization_idx over the id range that
 * encloses them, see idBoundsOfCreated). One statement, so both halves read the same snapshot.
 */
export async function customerMoneyAsOf(
  db: Queryable,
  organizationId: string,
  currency: Currency,
  asOf: Date,
): Promise<bigint> {
  const params: unknown[] = [organizationId, currency, asOf];
  const { idGte } = idBoundsOfCreated(ID_PREFIXES.journalEntry, { createdGte: asOf });
  let idBound = '';
  if (idGte !== undefined) {
    params.push(idGte);
    idBound = `AND e.id >= $${params.length}`;
  }
  const [row] = await db.query(
    `SELECT
       (SELECT coalesce(sum(a.credits_posted - a.debits_posted), 0)::text FROM ledger_accounts a
         WHERE a.organization_id = $1 AND a.kind = 'wallet' AND a.currency = $2) AS current_minor,
       (SELECT coalesce(sum(CASE WHEN p.side = 'credit' THEN p.amount_minor ELSE -p.amount_minor END), 0)::text
          FROM journal_entries e
          JOIN postings p ON p.entry_id = e.id
          JOIN ledger_accounts a ON a.id = p.account_id
         WHERE e.organization_id = $1 AND e.currency = $2 AND e.created_at >= $3 ${idBound}
           AND p.phase = 'posted' AND a.kind = 'wallet') AS since_minor`,
    params,
  );
  return BigInt(String(row?.current_minor ?? '0')) - BigInt(String(row?.since_minor ?? '0'));
}

/**
 * What the organization's trust ledger account in a currency held as of `asOf`, exactly, in minor units (an
 * asset: posted debits less posted credits; 0 when it has none yet). Read like customerMoneyAsOf: the
 * account's running sums less what entries created at or after `asOf` posted to it, in one statement. The
 * account is found by ledger_accounts_system_idx and its postings since by postings_account_entry_idx, over
 * the entry id range that encloses those times.
 */
export async function ledgerTrustBalanceAsOf(
  db: Queryable,
  organizationId: string,
  currency: Currency,
  asOf: Date,
): Promise<bigint> {
  const params: unknown[] = [organizationId, currency, asOf];
  const { idGte } = idBoundsOfCreated(ID_PREFIXES.journalEntry, { createdGte: asOf });
  let idBound = '';
  if (idGte !== undefined) {
    params.push(idGte);
    idBound = `AND p.entry_id >= $${params.length}`;
  }
  const [row] = await db.query(
    `WITH trust AS (
       SELECT id, debits_posted, credits_posted FROM ledger_accounts
        WHERE organization_id = $1 AND kind = 'trust' AND currency = $2
     )
     SELECT
       (SELECT coalesce(sum(debits_posted - credits_posted), 0)::text FROM trust) AS current_minor,
       (SELECT coalesce(sum(CASE WHEN p.side = 'debit' THEN p.amount_minor ELSE -p.amount_minor END), 0)::text
          FROM trust
          JOIN postings p ON p.account_id = trust.id
          JOIN journal_entries e ON e.id = p.entry_id
         WHERE p.phase = 'posted' AND e.created_at >= $3 ${idBound}) AS since_minor`,
    params,
  );
  return BigInt(String(row?.current_minor ?? '0')) - BigInt(String(row?.since_minor ?? '0'));
}
