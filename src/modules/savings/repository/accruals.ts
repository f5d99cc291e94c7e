/** Savings accounts' daily accruals: one row an account and day, what the day accrued, booked and capitalised. */
import { rowTable } from '../../../store/repositories/records.ts';
import { castToText } from '../../../store/repositories/rowMappers.ts';
import { fieldArrays, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface SavingsAccrualRow {
  walletId: string;
  day: string;
  organizationId: string;
  balanceMinor: bigint;
  annualRateBps: number;
  dayCountDays: number;
  dayCountBasis: number;
  parts: bigint;
  accruedPartsAfter: bigint;
  bookedMinor: bigint;
  capitalizedMinor: bigint;
  bookingEntryId: string | null;
  capitalizationEntryId: string | null;
  createdAt: Date;
}

const ACCRUALS = rowTable<SavingsAccrualRow>('savings_accruals', {
  walletId: String,
  day: castToText('day', String),
  organizationId: String,
  balanceMinor: toBigInt,
  annualRateBps: Number,
  dayCountDays: Number,
  dayCountBasis: Number,
  parts: toBigInt,
  accruedPartsAfter: toBigInt,
  bookedMinor: toBigInt,
  capitalizedMinor: toBigInt,
  bookingEntryId: nullableText,
  capitalizationEntryId: nullableText,
  createdAt: toDate,
});

/** Inserts the day's accruals; the primary key (account, day) refuses a second one for the same day. */
export async function insertSavingsAccruals(
  db: Queryable,
  rows: readonly SavingsAccrualRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `INSERT INTO savings_accruals (wallet_id, day, organization_id, balance_minor, annual_rate_bps, day_count_days,
       day_count_basis, parts, accrued_parts_after, booked_minor, capitalized_minor, booking_entry_id,
       capitalization_entry_id, created_at)
     SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[], $5::int[], $6::int[], $7::int[],
       $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::timestamptz[])`,
    [
      ...fieldArrays(rows, 'walletId', 'day', 'organizationId'),
      rows.map((r) => r.balanceMinor.toString()),
      ...fieldArrays(rows, 'annualRateBps', 'dayCountDays', 'dayCountBasis'),
      rows.map((r) => r.parts.toString()),
      rows.map((r) => r.accruedPartsAfter.toString()),
      rows.map((r) => r.bookedMinor.toString()),
      rows.map((r) => r.capitalizedMinor.toString()),
      ...fieldArrays(rows, 'bookingEntryId', 'capitalizationEntryId'),
      rows.map((r) => r.createdAt.toISOString()),
    ],
  );
}

/** An account's accruals, newest day first, before `beforeDay`. */
export async function listSavingsAccruals(
  db: Queryable,
  walletId: string,
  beforeDay: string | undefined,
  limit: number,
): Promise<SavingsAccrualRow[]> {
  const rows = await db.query(
    `SELECT ${ACCRUALS.columns} FROM savings_accruals
      WHERE wallet_id = $1 AND ($2::date IS NULL OR day < $2::date) ORDER BY day DESC LIMIT $3`,
    [walletId, beforeDay ?? null, limit],
  );
  return rows.map(ACCRUALS.fromRow);
}
