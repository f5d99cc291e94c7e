/** Conversions: executed quotes, each naming the two journal entries that moved the money. */

import type { Conversion, ConversionDirection } from '../../../domain/conversions.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import { type KeysetFilter, listNewestFirst, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

const CONVERSION_COLUMNS = `id, organization_id, quote_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency,
  to_currency, from_amount_minor, to_amount_minor, rate, fee_minor, debit_entry_id, credit_entry_id, created_by, created_at,
  fee_schedule_version, fee_rule, rate_version_id`;

function conversionFromRow(row: Record<string, unknown>): Conversion {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    quoteId: String(row.quote_id),
    customerId: String(row.customer_id),
    fromWalletId: String(row.from_wallet_id),
    toWalletId: String(row.to_wallet_id),
    direction: row.direction as ConversionDirection,
    fromCurrency: String(row.from_currency) as Currency,
    toCurrency: String(row.to_currency) as Currency,
    fromAmountMinor: toBigInt(row.from_amount_minor),
    toAmountMinor: toBigInt(row.to_amount_minor),
    rate: String(row.rate),
    feeMinor: toBigInt(row.fee_minor),
    debitEntryId: String(row.debit_entry_id),
    creditEntryId: String(row.credit_entry_id),
    createdBy: text(row.created_by),
    createdAt: toDate(row.created_at),
    feeScheduleVersion: row.fee_schedule_version === null ? null : Number(row.fee_schedule_version),
    feeRule: text(row.fee_rule),
    rateVersionId: text(row.rate_version_id),
  };
}

export async function insertConversion(db: Queryable, c: Conversion): Promise<void> {
  await db.query(
    `INSERT INTO conversions (${CONVERSION_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      c.id,
      c.organizationId,
      c.quoteId,
      c.customerId,
      c.fromWalletId,
      c.toWalletId,
      c.direction,
      c.fromCurrency,
      c.toCurrency,
      c.fromAmountMinor.toString(),
      c.toAmountMinor.toString(),
      c.rate,
      c.feeMinor.toString(),
      c.debitEntryId,
      c.creditEntryId,
      c.createdBy,
      c.createdAt,
      c.feeScheduleVersion,
      c.feeRule,
      c.rateVersionId,
    ],
  );
}

export async function findConversion(
  db: Queryable,
  organizationId: string,
  id: string,
): Promise<Conversion | undefined> {
  const [row] = await db.query(
    `SELECT ${CONVERSION_COLUMNS} FROM conversions WHERE organization_id = $1 AND id = $2`,
    [organizationId, id],
  );
  return row && conversionFromRow(row);
}

export async function listConversions(
  db: Queryable,
  organizationId: string,
  filter: KeysetFilter,
  rowsMax: number,
): Promise<Conversion[]> {
  const rows = await listNewestFirst(db, {
    table: 'conversions',
    columns: CONVERSION_COLUMNS,
    prefix: ID_PREFIXES.conversion,
    organizationId,
    filter,
    equal: [],
    rowsMax,
  });
  return rows.map(conversionFromRow);
}
