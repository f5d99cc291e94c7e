/** Conversions: executed quotes, each naming the two journal entries that moved the money. */

import type { Conversion } from '../../../domain/conversions.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { rowMapper } from '../../../store/repositories/rowMappers.ts';
import { nullableText } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import { pricingSourceParams, QUOTED_TERMS_FIELDS, quotedAmountParams } from './conversionTerms.ts';

const CONVERSION_COLUMNS = `id, organization_id, quote_id, customer_id, from_wallet_id, to_wallet_id, direction, from_currency,
  to_currency, from_amount_minor, to_amount_minor, rate, fee_minor, debit_entry_id, credit_entry_id, created_by, created_at,
  fee_schedule_version, fee_rule, rate_version_id`;

const conversionFromRow = rowMapper<Conversion>({
  ...QUOTED_TERMS_FIELDS,
  quoteId: String,
  debitEntryId: String,
  creditEntryId: String,
  createdBy: nullableText,
});

const CONVERSIONS: RecordTable<Conversion> = {
  name: 'conversions',
  columns: CONVERSION_COLUMNS,
  prefix: ID_PREFIXES.conversion,
  fromRow: conversionFromRow,
};

export async function insertConversion(db: Queryable, c: Conversion): Promise<void> {
  await db.query(
    `INSERT INTO conversions (${CONVERSION_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      c.id,
      c.organizationId,
      c.quoteId,
      ...quotedAmountParams(c),
      c.debitEntryId,
      c.creditEntryId,
      c.createdBy,
      c.createdAt,
      ...pricingSourceParams(c),
    ],
  );
}

export const findConversion = organizationRecordFinder(CONVERSIONS);

export const listConversions = newestFirstLister(CONVERSIONS);
