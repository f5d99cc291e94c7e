/** Loan products: the terms loans are lent on. */
import { ID_PREFIXES } from '../../../domain/ids.ts';
import type { Currency } from '../../../domain/money.ts';
import {
  newestFirstLister,
  organizationRecordFinder,
  type RecordTable,
} from '../../../store/repositories/records.ts';
import { toBigInt, toDate } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import type { LoanAmortisation, LoanProduct } from '../domain/loans.ts';

const PRODUCT_COLUMNS =
  'id, organization_id, name, currency, interest_rate_bps, term_months, amortisation, origination_fee_bps, grace_period_months, penalty_rate_bps, min_principal_minor, max_principal_minor, created_by, created_at';

function productFromRow(row: Record<string, unknown>): LoanProduct {
  return {
    id: String(row.id),
    organizationId: String(row.organization_id),
    name: String(row.name),
    currency: row.currency as Currency,
    interestRateBps: Number(row.interest_rate_bps),
    termMonths: Number(row.term_months),
    amortisation: row.amortisation as LoanAmortisation,
    originationFeeBps: Number(row.origination_fee_bps),
    gracePeriodMonths: Number(row.grace_period_months),
    penaltyRateBps: Number(row.penalty_rate_bps),
    minPrincipalMinor: toBigInt(row.min_principal_minor),
    maxPrincipalMinor: toBigInt(row.max_principal_minor),
    createdAt: toDate(row.created_at),
  };
}

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
