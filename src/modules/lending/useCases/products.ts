/** Loan products: the terms an organization lends on, created once and read. */

import type { Deps } from '../../../app/deps.ts';
import { getById, listPage } from '../../../app/reads.ts';
import { validationError } from '../../../domain/errors.ts';
import { type Currency, checkSingleAmount, isCurrency, parseAmount } from '../../../domain/money.ts';
import { requiredText } from '../../../domain/requiredText.ts';
import type { Queryable } from '../../../store/store.ts';
import { LOAN_PRODUCT_NAME_CHARS_MAX, type LoanProduct, parseLoanTerms } from '../domain/loans.ts';
import { findLoanProduct, insertLoanProduct, listLoanProducts } from '../repository/products.ts';

export interface LoanProductInput {
  name: string;
  currency: string;
  interest_rate_bps: number;
  term_months: number;
  amortisation: string;
  origination_fee_bps?: number | undefined;
  grace_period_months?: number | undefined;
  penalty_rate_bps?: number | undefined;
  min_principal: string | number;
  max_principal: string | number;
}

export async function createLoanProduct(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: LoanProductInput,
  createdBy: string | null,
  sources: { minPrincipal?: string | undefined; maxPrincipal?: string | undefined } = {},
): Promise<LoanProduct> {
  const name = requiredText(input.name, 'name', LOAN_PRODUCT_NAME_CHARS_MAX, 'invalid_length');
  if (!isCurrency(input.currency)) {
    throw validationError('currency', 'currency is not a supported currency', 'invalid_value');
  }
  const currency = input.currency as Currency;
  const terms = parseLoanTerms(input, currency);
  const minPrincipalMinor = checkSingleAmount(
    parseAmount(input.min_principal, currency, 'min_principal', sources.minPrincipal),
    currency,
    'min_principal',
  );
  const maxPrincipalMinor = checkSingleAmount(
    parseAmount(input.max_principal, currency, 'max_principal', sources.maxPrincipal),
    currency,
    'max_principal',
  );
  if (maxPrincipalMinor < minPrincipalMinor) {
    throw validationError('max_principal', 'max_principal must be at least min_principal', 'out_of_range');
  }
  const product: LoanProduct = {
    id: deps.newId('loanProduct'),
    organizationId,
    name,
    ...terms,
    minPrincipalMinor,
    maxPrincipalMinor,
    createdAt: deps.now(),
  };
  await insertLoanProduct(tx, product, createdBy);
  return product;
}

export const getLoanProduct = getById<LoanProduct>(findLoanProduct, 'loan product');

export const listOrganizationLoanProducts = listPage(listLoanProducts);
