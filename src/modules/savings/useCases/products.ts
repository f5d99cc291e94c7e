/**
 * Savings products: products as data per organization, their terms fixed when created, their rates
 * effective-dated and only ever appended.
 */

import type { Deps } from '../../../app/deps.ts';
import { getById, requireById } from '../../../app/reads.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import { numberSourceOf } from '../../../domain/jsonNumbers.ts';
import type { Metadata } from '../../../domain/metadata.ts';
import { type Currency, isCurrency, parseAmount } from '../../../domain/money.ts';
import { type Page, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
import { utcDay } from '../../testClock/index.ts';
import {
  checkAccess,
  checkRateBps,
  type DayCountConvention,
  isDayCountConvention,
  SAVINGS_PRODUCT_NAME_CHARS_MAX,
} from '../domain.ts';
import {
  findSavingsProduct,
  insertSavingsProduct,
  insertSavingsRate,
  listSavingsProducts as listSavingsProductRows,
  lockSavingsProduct,
  type SavingsProduct,
} from '../repository/products.ts';
import { organizationToday } from './today.ts';

export type { SavingsProduct };

export interface CreateSavingsProductInput {
  name: unknown;
  currency: unknown;
  annual_rate_bps: unknown;
  day_count: unknown;
  minimum_balance?: unknown;
  access: unknown;
  notice_days?: unknown;
  term_days?: unknown;
  early_withdrawal_penalty_bps?: unknown;
  metadata?: Metadata;
}

export async function createSavingsProduct(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: CreateSavingsProductInput,
  createdBy: string,
): Promise<SavingsProduct> {
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > SAVINGS_PRODUCT_NAME_CHARS_MAX) {
    throw validationError('name', `name is 1 to ${SAVINGS_PRODUCT_NAME_CHARS_MAX} characters.`);
  }
  if (typeof input.currency !== 'string' || !isCurrency(input.currency))
    throw validationError('currency', 'currency is not supported', 'invalid_value');
  const currency: Currency = input.currency;
  const rate = checkRateBps(input.annual_rate_bps, 'annual_rate_bps');
  if (!isDayCountConvention(input.day_count)) {
    throw validationError(
      'day_count',
      'day_count must be one of: actual_365_fixed, actual_360, thirty_360',
      'invalid_value',
    );
  }
  const dayCount: DayCountConvention = input.day_count;
  const minimumBalanceMinor =
    input.minimum_balance === undefined
      ? 0n
      : parseAmount(
          input.minimum_balance,
          currency,
          'minimum_balance',
          numberSourceOf(input, 'minimum_balance'),
        );
  if (minimumBalanceMinor < 0n)
    throw validationError('minimum_balance', 'minimum_balance cannot be negative');
  const access = checkAccess({
    access: input.access,
    noticeDays: input.notice_days,
    termDays: input.term_days,
    penaltyBps: input.early_withdrawal_penalty_bps,
  });
  const now = deps.now();
  const product: SavingsProduct = {
    id: deps.newId('savingsProduct'),
    organizationId,
    name,
    currency,
    dayCount,
    minimumBalanceMinor,
    ...access,
    metadata: input.metadata ?? {},
    createdBy,
    createdAt: now,
    rates: [{ effectiveFrom: await organizationToday(tx, deps, organizationId), annualRateBps: rate }],
  };
  await insertSavingsProduct(tx, product);
  return product;
}

export const getSavingsProduct = getById<SavingsProduct>(findSavingsProduct, 'savings_product');

/** The savings product with this id, read on a transaction; 404 naming `param` when there is none. */
export const requireSavingsProduct = requireById<SavingsProduct>(findSavingsProduct, 'savings_product');

export async function listSavingsProducts(
  deps: Deps,
  organizationId: string,
  request: { limit: number; startingAfter?: string | undefined },
): Promise<Page<SavingsProduct>> {
  const rows = await listSavingsProductRows(
    deps.store,
    organizationId,
    request.startingAfter,
    request.limit + 1,
  );
  return toPage(rows, request.limit);
}

/**
 * Appends a rate from a day on (today on the organization's clock by default). Only today or later: a day
 * is accrued once it has ended, so no day already accrued can change its rate.
 */
export async function addSavingsRate(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  productId: string,
  input: { annual_rate_bps: unknown; effective_from?: unknown },
  createdBy: string,
): Promise<SavingsProduct> {
  await lockSavingsProduct(tx, organizationId, productId);
  const product = await requireSavingsProduct(tx, organizationId, productId);
  const annualRateBps = checkRateBps(input.annual_rate_bps, 'annual_rate_bps');
  const now = await organizationToday(tx, deps, organizationId);
  const effectiveFrom = input.effective_from === undefined ? now : input.effective_from;
  if (
    typeof effectiveFrom !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}$/.test(effectiveFrom) ||
    isNotCalendarDay(effectiveFrom)
  ) {
    throw validationError('effective_from', 'effective_from is a day, YYYY-MM-DD', 'invalid_format');
  }
  if (effectiveFrom < now) {
    throw new AppError({
      status: 422,
      code: 'savings_rate_in_past',
      title: 'A rate cannot start in the past',
      detail: `Today on the organization's clock is ${now}; days before it may already be accrued at the rate they had.`,
      param: 'effective_from',
    });
  }
  if (!(await insertSavingsRate(tx, productId, { effectiveFrom, annualRateBps }, createdBy, deps.now()))) {
    throw new AppError({
      status: 409,
      code: 'savings_rate_exists',
      title: 'A rate already starts that day',
      detail: `Product ${productId} already has a rate from ${effectiveFrom}; rates are never changed, choose another day.`,
      param: 'effective_from',
    });
  }
  const rates = [...product.rates, { effectiveFrom, annualRateBps }].sort((a, b) =>
    a.effectiveFrom < b.effectiveFrom ? -1 : 1,
  );
  return { ...product, rates };
}

/** True when the text is not a real calendar day (2027-02-30). */
function isNotCalendarDay(day: string): boolean {
  const parsed = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isNaN(parsed) || utcDay(new Date(parsed)) !== day;
}
