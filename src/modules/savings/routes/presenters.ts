/** Savings products and accruals in their wire form (accounts, notices and withdrawals: the use cases' `…Json`). */
import { type Currency, formatAmount } from '../../../domain/money.ts';
import { ACCRUAL_DENOMINATOR, rateOn } from '../domain.ts';
import type { SavingsAccrualRow } from '../useCases/accounts.ts';
import type { SavingsProduct } from '../useCases/products.ts';

/** The product as the API shows it on `today` (the organization's): `annual_rate_bps` is the rate in force. */
export function presentSavingsProduct(product: SavingsProduct, today: string) {
  const current = rateOn(product.rates, today) ?? product.rates[0];
  return {
    object: 'savings_product',
    id: product.id,
    name: product.name,
    currency: product.currency,
    annual_rate_bps: current?.annualRateBps ?? 0,
    rates: product.rates.map((r) => ({ effective_from: r.effectiveFrom, annual_rate_bps: r.annualRateBps })),
    day_count: product.dayCount,
    minimum_balance: formatAmount(product.minimumBalanceMinor, product.currency),
    access: product.access,
    notice_days: product.noticeDays,
    term_days: product.termDays,
    early_withdrawal_penalty_bps: product.earlyWithdrawalPenaltyBps,
    metadata: product.metadata,
    created_by: product.createdBy,
    created_at: product.createdAt.toISOString(),
  };
}

export function presentAccrual(row: SavingsAccrualRow, currency: Currency) {
  return {
    object: 'savings_accrual',
    savings_account: row.walletId,
    day: row.day,
    balance: formatAmount(row.balanceMinor, currency),
    annual_rate_bps: row.annualRateBps,
    day_count_fraction: `${row.dayCountDays}/${row.dayCountBasis}`,
    interest_numerator: row.parts.toString(),
    accrued_numerator: row.accruedPartsAfter.toString(),
    denominator: ACCRUAL_DENOMINATOR.toString(),
    booked: formatAmount(row.bookedMinor, currency),
    capitalized: formatAmount(row.capitalizedMinor, currency),
    booking_entry: row.bookingEntryId,
    capitalization_entry: row.capitalizationEntryId,
  };
}
