/**
 * The daily safeguarding reports: per organization, currency and day, customer money against the trust
 * accounts' closing balances and the ledger's trust account, with the exceptions a shortfall or a difference
 * opened.
 */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import {
  byFields,
  newestFirstLister,
  organizationRecordFinder,
  recordFinderBy,
  recordTable,
} from '../../../store/repositories/records.ts';
import { castToText, stored } from '../../../store/repositories/rowMappers.ts';
import {
  type KeysetFilter,
  nullableBigInt,
  nullableText,
  toBigInt,
  toDate,
  toJsonObject,
} from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { ReportedTrustBalance, SafeguardingReportStatus } from '../domain/safeguarding.ts';

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

interface StoredTrustBalance {
  trust_account: string;
  balance: string | null;
  closing_balance_minor: string | null;
}

/** The trust accounts' balances a report was decided on, as stored with it. */
function trustBalancesOf(value: unknown): ReportedTrustBalance[] {
  return toJsonObject<StoredTrustBalance[]>(value).map((b) => ({
    trustAccountId: b.trust_account,
    balanceId: b.balance,
    closingBalanceMinor: nullableBigInt(b.closing_balance_minor),
  }));
}

const REPORTS = recordTable<SafeguardingReport>('safeguarding_reports', ID_PREFIXES.safeguardingReport, {
  id: String,
  organizationId: String,
  currency: stored,
  date: castToText('report_date', String),
  status: stored,
  customerMoneyMinor: toBigInt,
  trustBalanceMinor: nullableBigInt,
  differenceMinor: nullableBigInt,
  trustBalances: trustBalancesOf,
  ledgerTrustBalanceMinor: nullableBigInt,
  ledgerDifferenceMinor: nullableBigInt,
  asOf: toDate,
  exceptionId: nullableText,
  mismatchExceptionId: nullableText,
  createdAt: toDate,
  updatedAt: toDate,
});

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

export const findReport = organizationRecordFinder(REPORTS);

const findReportOfDay = recordFinderBy(REPORTS, 'organization_id', 'report_date', 'currency');

/** The day's report of a currency, locked (the caller holds the currency's trust accounts first). */
export const lockReportOfDay = (
  db: Queryable,
  organizationId: string,
  currency: Currency,
  day: string,
): Promise<SafeguardingReport | undefined> =>
  findReportOfDay(db, organizationId, day, currency, { forUpdate: true });

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
export const listReports = newestFirstLister(
  REPORTS,
  byFields<ReportFilter>('currency', 'status'),
  (filter, params) => {
    const conditions: string[] = [];
    for (const [bound, day] of [
      ['>=', filter.dateGte],
      ['<=', filter.dateLte],
    ] as const) {
      if (day === undefined) continue;
      params.push(day);
      conditions.push(`report_date ${bound} $${params.length}`);
    }
    return conditions;
  },
);
