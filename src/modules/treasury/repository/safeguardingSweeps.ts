/** Sweeps between a rail partner's float and the trust account, as operators recorded them. */
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
import { type KeysetFilter, nullableText, toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { SafeguardingSweep } from '../domain/trustLedger.ts';

const SWEEPS = recordTable<SafeguardingSweep>('safeguarding_sweeps', ID_PREFIXES.safeguardingSweep, {
  id: String,
  organizationId: String,
  currency: stored,
  rail: stored,
  direction: stored,
  amountMinor: toBigInt,
  reference: String,
  valueDate: castToText('value_date', String),
  trustAccountId: nullableText,
  journalEntryId: String,
  createdBy: String,
  createdAt: toDate,
});

export async function insertSweep(db: Queryable, s: SafeguardingSweep): Promise<void> {
  await db.query(
    `INSERT INTO safeguarding_sweeps (id, organization_id, currency, rail, direction, amount_minor, reference,
       value_date, trust_account_id, journal_entry_id, created_by, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      s.id,
      s.organizationId,
      s.currency,
      s.rail,
      s.direction,
      s.amountMinor.toString(),
      s.reference,
      s.valueDate,
      s.trustAccountId,
      s.journalEntryId,
      s.createdBy,
      s.createdAt,
    ],
  );
}

/** The sweep recorded with this reference at the rail's partner in the currency (safeguarding_sweeps_reference_idx). */
export const findSweepByReference = recordFinderBy(
  SWEEPS,
  'organization_id',
  'rail',
  'currency',
  'reference',
);

export const findSweep = organizationRecordFinder(SWEEPS);

export interface SweepFilter extends KeysetFilter {
  currency?: Currency | undefined;
}

/** Newest first; a currency is served by safeguarding_sweeps_currency_idx. */
export const listSweeps = newestFirstLister(SWEEPS, byFields<SweepFilter>('currency'));
