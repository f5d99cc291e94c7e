/** Conversion rates: the table in force per organization, and the versions every change appends. */
import type { Currency } from '../../../domain/money.ts';
import { recordFinderBy, rowTable } from '../../../store/repositories/records.ts';
import { column, text } from '../../../store/repositories/rowMappers.ts';
import { fieldArrays, forUpdateClause, nullableText, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';

export interface StoredConversionRate {
  organizationId: string;
  from: Currency;
  to: Currency;
  rate: string;
  /** The version in force (null: set before rates had versions). */
  versionId: string | null;
  updatedAt: Date;
}

const RATES = rowTable<StoredConversionRate>('conversion_rates', {
  organizationId: String,
  from: column('from_currency', text<Currency>),
  to: column('to_currency', text<Currency>),
  rate: String,
  versionId: nullableText,
  updatedAt: toDate,
});
const { columns: RATE_COLUMNS, fromRow: rateFromRow } = RATES;

export async function listConversionRates(
  db: Queryable,
  organizationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<StoredConversionRate[]> {
  const rows = await db.query(
    `SELECT ${RATE_COLUMNS} FROM conversion_rates
      WHERE organization_id = $1 ORDER BY from_currency, to_currency${forUpdateClause(options.forUpdate)}`,
    [organizationId],
  );
  return rows.map(rateFromRow);
}

export const findConversionRate = recordFinderBy(RATES, 'organization_id', 'from_currency', 'to_currency');

/** Why a rate version applied (docs/STABLECOINS.md). */
export type RateVersionBasis = 'within_band' | 'sandbox_first_rate' | 'defaults' | 'approved';

export interface ConversionRateVersion {
  id: string;
  organizationId: string;
  from: Currency;
  to: Currency;
  rate: string;
  previousRate: string | null;
  basis: RateVersionBasis;
  setBy: string | null;
  createdAt: Date;
}

/** Appends rate versions (never updated or deleted). */
export async function insertConversionRateVersions(
  db: Queryable,
  versions: readonly ConversionRateVersion[],
): Promise<void> {
  if (versions.length === 0) return;
  await db.query(
    `INSERT INTO conversion_rate_versions
       (id, organization_id, from_currency, to_currency, rate, previous_rate, basis, set_by, created_at)
     SELECT v.id, $1, v.f, v.t, v.r, v.p, v.b, v.s, $9
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         AS v (id, f, t, r, p, b, s)`,
    [
      versions[0]?.organizationId,
      ...fieldArrays(versions, 'id', 'from', 'to', 'rate', 'previousRate', 'basis', 'setBy'),
      versions[0]?.createdAt,
    ],
  );
}

/** The pairs (`FROM/TO`) among `pairs` that ever had a rate version in the organization. */
export async function pairsWithRateHistory(
  db: Queryable,
  organizationId: string,
  pairs: readonly { from: Currency; to: Currency }[],
): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await db.query(
    `SELECT DISTINCT v.from_currency, v.to_currency FROM conversion_rate_versions v
       JOIN unnest($2::text[], $3::text[]) AS p (f, t) ON p.f = v.from_currency AND p.t = v.to_currency
      WHERE v.organization_id = $1`,
    [organizationId, ...fieldArrays(pairs, 'from', 'to')],
  );
  return new Set(rows.map((r) => `${String(r.from_currency)}/${String(r.to_currency)}`));
}

/** Replaces the organization's rates whole, each naming its version. */
export async function replaceConversionRates(
  db: Queryable,
  organizationId: string,
  rates: readonly { from: Currency; to: Currency; rate: string; versionId: string | null }[],
  now: Date,
): Promise<void> {
  await db.query('DELETE FROM conversion_rates WHERE organization_id = $1', [organizationId]);
  if (rates.length === 0) return;
  await db.query(
    `INSERT INTO conversion_rates (organization_id, from_currency, to_currency, rate, version_id, updated_at)
     SELECT $1, f, t, r, v, $6 FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS x (f, t, r, v)`,
    [organizationId, ...fieldArrays(rates, 'from', 'to', 'rate', 'versionId'), now],
  );
}

/**
 * Writes rates and their versions (basis `defaults`) unless the organization has rates; true when this
 * call wrote them. One statement, so the versions exist only with the rates that name them.
 */
export async function insertConversionRatesIfNone(
  db: Queryable,
  organizationId: string,
  rates: readonly { id: string; from: Currency; to: Currency; rate: string }[],
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `WITH none AS (SELECT NOT EXISTS (SELECT 1 FROM conversion_rates WHERE organization_id = $1) AS yes),
     versions AS (
       INSERT INTO conversion_rate_versions
         (id, organization_id, from_currency, to_currency, rate, previous_rate, basis, set_by, created_at)
       SELECT id, $1, f, t, r, NULL, 'defaults', NULL, $6
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS x (id, f, t, r), none
        WHERE none.yes
       RETURNING id, from_currency, to_currency, rate)
     INSERT INTO conversion_rates (organization_id, from_currency, to_currency, rate, version_id, updated_at)
     SELECT $1, from_currency, to_currency, rate, id, $6 FROM versions
     ON CONFLICT DO NOTHING RETURNING 1`,
    [organizationId, ...fieldArrays(rates, 'id', 'from', 'to', 'rate'), now],
  );
  return rows.length > 0;
}
