/** Loan products: the terms loans are lent on. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import {
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { type RowFields, rowMapper, stored } from '../../../store/repositories/rowMappers.ts';
import { toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { LoanProduct, LoanTerms } from '../domain/loans.ts';

const PRODUCT_COLUMNS =
  'id, organization_id, name, currency, interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps, min_principal_minor, max_principal_minor, created_by, created_at';

/** A product's terms as its row holds them; a loan's row holds a copy, read the same. */
export const LOAN_TERMS_FIELDS: RowFields<LoanTerms> = {
  currency: stored,
  interestRateBps: Number,
  termMonths: Number,
  amortisation: stored,
  originationFeeBps: Number,
  gracePeriodMonths: Number,
  penaltyRateBps: Number,
};

const productFromRow = rowMapper<LoanProduct>({
  id: String,
  organizationId: String,
  name: String,
  ...LOAN_TERMS_FIELDS,
  minPrincipalMinor: toBigInt,
  maxPrincipalMinor: toBigInt,
  createdAt: toDate,
});

const PRODUCTS: RecordTable<LoanProduct> = {
  name: 'loan_products',
  columns: PRODUCT_COLUMNS,
  prefix: ID_PREFIXES.loanProduct,
  fromRow: productFromRow,
};

export async function insertLoanProduct(
  db: Queryable,
  p: LoanProduct,
  createdBy: string | null,
): Promise<void> {
  await db.query(
    `INSERT INTO loan_products (${PRODUCT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      p.id,
      p.organizationId,
      p.name,
      p.currency,
      p.interestRateBps,
      p.termMonths,
      p.amortisation,
      p.originationFeeBps,
      p.gracePeriodMonths,
      p.penaltyRateBps,
      p.minPrincipalMinor,
      p.maxPrincipalMinor,
      createdBy,
      p.createdAt,
    ],
  );
}

export const findLoanProduct = organizationRecordFinder(PRODUCTS);

export const listLoanProducts = newestFirstLister(PRODUCTS);
