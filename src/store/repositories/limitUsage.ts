/**
 * What customers sent per currency, UTC day and month: the running sums tier limits are decided on. The
 * ledger writer locks a batch's rows with one statement and writes them back with one.
 */
import type { Queryable } from '../store.ts';
import { type CounterRows, lockCounterRows } from './counterRows.ts';
import { column, rowMapper, stored } from './rowMappers.ts';
import { fieldArrays, toBigInt, toDay } from './rows.ts';

export type LimitPeriod = 'day' | 'month';

export interface UsageKey {
  customerId: string;
  currency: string;
  period: LimitPeriod;
  /** YYYY-MM-DD: the day, or the month's first day. */
  periodStart: string;
}

export interface LockedUsage extends UsageKey {
  sentMinor: bigint;
  /** The customer's, for its tier. */
  kycStatus: string;
  customerType: string;
}

const usageFromRow = rowMapper<LockedUsage>({
  customerId: String,
  currency: String,
  period: stored,
  periodStart: toDay,
  sentMinor: toBigInt,
  kycStatus: String,
  customerType: column('type', String),
});

export function usageKeyOf(k: UsageKey): string {
  return `${k.customerId}\u0000${k.currency}\u0000${k.period}\u0000${k.periodStart}`;
}

const USAGE_KEYS = `unnest($1::text[], $2::text[], $3::text[], $4::date[]) WITH ORDINALITY
    AS k(customer_id, currency, period, period_start, i)`;

const LIMIT_USAGE: CounterRows<UsageKey, LockedUsage> = {
  lockStatement: `INSERT INTO customer_limit_usage (customer_id, currency, period, period_start, sent_minor)
     SELECT k.customer_id, k.currency, k.period, k.period_start, 0 FROM ${USAGE_KEYS} ORDER BY k.i
     ON CONFLICT (customer_id, currency, period, period_start)
       DO UPDATE SET sent_minor = customer_limit_usage.sent_minor WHERE false`,
  readStatement: `SELECT u.customer_id, u.currency, u.period, u.period_start::text AS period_start, u.sent_minor,
            c.kyc_status, c.type
       FROM ${USAGE_KEYS}
       JOIN customer_limit_usage u ON u.customer_id = k.customer_id AND u.currency = k.currency
        AND u.period = k.period AND u.period_start = k.period_start
       JOIN customers c ON c.id = u.customer_id`,
  keyFields: ['customerId', 'currency', 'period', 'periodStart'],
  keyOf: usageKeyOf,
  fromRow: usageFromRow,
};

/**
 * Creates the rows that do not exist yet and locks them all, in key order (so batches never deadlock on
 * them), returning each with its sum and its customer's KYC status and type.
 */
export function lockLimitUsage(db: Queryable, keys: readonly UsageKey[]): Promise<Map<string, LockedUsage>> {
  return lockCounterRows(db, LIMIT_USAGE, keys);
}

/** Writes a batch's new sums (rows locked by lockLimitUsage). */
export async function saveLimitUsage(db: Queryable, usage: readonly LockedUsage[]): Promise<void> {
  if (usage.length === 0) return;
  await db.query(
    `UPDATE customer_limit_usage u SET sent_minor = v.sent_minor
       FROM unnest($1::text[], $2::text[], $3::text[], $4::date[], $5::bigint[])
         AS v(customer_id, currency, period, period_start, sent_minor)
      WHERE u.customer_id = v.customer_id AND u.currency = v.currency AND u.period = v.period
        AND u.period_start = v.period_start`,
    [
      ...fieldArrays(usage, 'customerId', 'currency', 'period', 'periodStart'),
      usage.map((u) => u.sentMinor.toString()),
    ],
  );
}

/** Gives a transfer that moved no money back to its customer's day and month. */
export async function releaseLimitUsage(
  db: Queryable,
  walletId: string,
  currency: string,
  amountMinor: bigint,
  periods: { day: string; month: string },
): Promise<void> {
  await db.query(
    `UPDATE customer_limit_usage u SET sent_minor = GREATEST(u.sent_minor - $3::bigint, 0)
       FROM wallets w
      WHERE w.id = $1 AND u.customer_id = w.owner_id AND u.currency = $2
        AND ((u.period = 'day' AND u.period_start = $4::date) OR (u.period = 'month' AND u.period_start = $5::date))`,
    [walletId, currency, amountMinor.toString(), periods.day, periods.month],
  );
}
