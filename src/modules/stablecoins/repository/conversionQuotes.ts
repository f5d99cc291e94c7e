/** Conversion quotes: a rate and both amounts fixed for a while, executed once. */

import type {
  ConversionDirection,
  ConversionQuote,
  ConversionQuoteStatus,
} from '../../../domain/conversions.ts';
import type { Currency } from '../../../domain/money.ts';
import { toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const lock = (forUpdate: boolean | undefined) => (forUpdate ? ' FOR UPDATE' : '');

const QUOTE_COLUMNS = `id, organization_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency, to_currency,
  from_amount_minor, to_amount_minor, rate, fee_minor, status, conversion_id, created_at, expires_at, fee_schedule_version,
  fee_rule, rate_version_id`;

function quoteFromRow(row: Record<string, unknown>): ConversionQuote {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
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
    status: row.status as ConversionQuoteStatus,
    conversionId: text(row.conversion_id),
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    feeScheduleVersion: row.fee_schedule_version === null ? null : Number(row.fee_schedule_version),
    feeRule: text(row.fee_rule),
    rateVersionId: text(row.rate_version_id),
  };
}

export async function insertConversionQuote(db: Queryable, q: ConversionQuote): Promise<void> {
  await db.query(
    `INSERT INTO conversion_quotes (${QUOTE_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [
      q.id,
      q.organizationId,
      q.customerId,
      q.fromWalletId,
      q.toWalletId,
      q.direction,
      q.fromCurrency,
      q.toCurrency,
      q.fromAmountMinor.toString(),
      q.toAmountMinor.toString(),
      q.rate,
      q.feeMinor.toString(),
      q.status,
      q.conversionId,
      q.createdAt,
      q.expiresAt,
      q.feeScheduleVersion,
      q.feeRule,
      q.rateVersionId,
    ],
  );
}

export async function findConversionQuote(
  db: Queryable,
  organizationId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ConversionQuote | undefined> {
  const [row] = await db.query(
    `SELECT ${QUOTE_COLUMNS} FROM conversion_quotes WHERE organization_id = $1 AND id = $2${lock(options.forUpdate)}`,
    [organizationId, id],
  );
  return row && quoteFromRow(row);
}

export async function markQuoteExecuted(db: Queryable, quoteId: string, conversionId: string): Promise<void> {
  await db.query(
    `UPDATE conversion_quotes SET status = 'executed', conversion_id = $2 WHERE id = $1 AND status = 'open'`,
    [quoteId, conversionId],
  );
}
