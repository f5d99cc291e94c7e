/** Conversion quotes: a rate and both amounts fixed for a while, executed once. */

import type { ConversionQuote } from '../../../domain/conversions.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { organizationRecordFinder, type RecordTable } from '../../../store/repositories/records.ts';
import { rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import { pricingSourceParams, QUOTED_TERMS_FIELDS, quotedAmountParams } from './conversionTerms.ts';

const QUOTE_COLUMNS = `id, organization_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency, to_currency,
  from_amount_minor, to_amount_minor, rate, fee_minor, status, conversion_id, created_at, expires_at, fee_schedule_version,
  fee_rule, rate_version_id`;

const quoteFromRow = rowMapper<ConversionQuote>({
  ...QUOTED_TERMS_FIELDS,
  status: stored,
  conversionId: nullableText,
  expiresAt: toDate,
});

const QUOTES: RecordTable<ConversionQuote> = {
  name: 'conversion_quotes',
  columns: QUOTE_COLUMNS,
  prefix: ID_PREFIXES.conversionQuote,
  fromRow: quoteFromRow,
};

export async function insertConversionQuote(db: Queryable, q: ConversionQuote): Promise<void> {
  await db.query(
    `INSERT INTO conversion_quotes (${QUOTE_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [
      q.id,
      q.organizationId,
      ...quotedAmountParams(q),
      q.status,
      q.conversionId,
      q.createdAt,
      q.expiresAt,
      ...pricingSourceParams(q),
    ],
  );
}

export const findConversionQuote = organizationRecordFinder(QUOTES);

export async function markQuoteExecuted(db: Queryable, quoteId: string, conversionId: string): Promise<void> {
  await db.query(
    `UPDATE conversion_quotes SET status = 'executed', conversion_id = $2 WHERE id = $1 AND status = 'open'`,
    [quoteId, conversionId],
  );
}
