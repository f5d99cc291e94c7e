/**
 * Lending, pure: what a loan is. Loan products and their terms (rate, term, amortisation, fee, grace period,
 * penalty rate) as read from the wire, loans, their statuses, instalments and repayments, and the arrears
 * buckets by days past due. The arithmetic over them is in schedule.ts (the repayment schedule) and
 * balances.ts (what is owed, the allocation of a repayment, arrears and penalty).
 */

import { type AppError, invalidStateTransition, validationError } from '../../../domain/errors.ts';
import type { LOAN_EVENT_TYPES } from '../../../domain/events.ts';
import { requireOneOf, requireWholeNumber } from '../../../domain/json.ts';
import { type Currency, formatAmount } from '../../../domain/money.ts';

export const LOAN_AMORTISATIONS = ['flat', 'declining_balance'] as const;
export type LoanAmortisation = (typeof LOAN_AMORTISATIONS)[number];

/**
 * `pending_approval`: the policy asked for an approval; `approved`: ready to disburse; `rejected`: by the
 * policy or its approval; `canceled`: withdrawn before disbursement; `active`: disbursed and being repaid; `paid_off`: everything owed was paid;
 * `written_off`: an operator wrote what was left off as a loss.
 */
export const LOAN_STATUSES = [
  'pending_approval',
  'approved',
  'rejected',
  'canceled',
  'active',
  'paid_off',
  'written_off',
] as const;
export type LoanStatus = (typeof LOAN_STATUSES)[number];

export type LoanEventType = (typeof LOAN_EVENT_TYPES)[number];

/** Instalments fall due monthly; a term is a whole number of months, at most thirty years. */
export const LOAN_TERM_MONTHS_MAX = 360;
/** The highest annual interest or penalty rate a product may state, in basis points (1,000 % a year). */
export const LOAN_RATE_BPS_MAX = 100_000;
/** The highest origination fee, in basis points of the principal (50 %). */
export const LOAN_FEE_BPS_MAX = 5_000;
export const LOAN_PRODUCT_NAME_CHARS_MAX = 100;
/** The longest a write-off's reason may be. */
export const LOAN_WRITE_OFF_REASON_CHARS_MAX = 500;

/**
 * Arrears buckets by days past due, in order: `current` (nothing overdue), then 1-30, 31-60, 61-90 days and
 * more than 90 days. A bucket holds the days from its `fromDays` up to the next bucket's.
 */
export const ARREARS_BUCKETS = [
  { name: 'current', fromDays: 0 },
  { name: 'dpd_1_30', fromDays: 1 },
  { name: 'dpd_31_60', fromDays: 31 },
  { name: 'dpd_61_90', fromDays: 61 },
  { name: 'dpd_90_plus', fromDays: 91 },
] as const;
export type ArrearsBucket = (typeof ARREARS_BUCKETS)[number]['name'];
export const ARREARS_BUCKET_NAMES = ARREARS_BUCKETS.map((b) => b.name) as ArrearsBucket[];

/** What a loan is lent on: a product's terms, copied onto each loan so a loan keeps the terms it was made with. */
export interface LoanTerms {
  currency: Currency;
  /** Nominal annual interest rate in basis points; a month's rate is a twelfth of it. */
  interestRateBps: number;
  termMonths: number;
  amortisation: LoanAmortisation;
  /** Charged once, in basis points of the principal, due with the first instalment (never capitalised). */
  originationFeeBps: number;
  /** The first instalments that pay interest only; the principal is repaid over the rest of the term. */
  gracePeriodMonths: number;
  /** Annual rate in basis points on overdue principal and interest, accrued day by day. */
  penaltyRateBps: number;
}

export interface LoanProduct extends LoanTerms {
  id: string;
  organizationId: string;
  name: string;
  minPrincipalMinor: bigint;
  maxPrincipalMinor: bigint;
  createdAt: Date;
}

export interface ScheduledInstalment {
  number: number;
  dueDate: string;
  principalMinor: bigint;
  interestMinor: bigint;
  feeMinor: bigint;
}

export interface Instalment extends ScheduledInstalment {
  principalPaidMinor: bigint;
  interestPaidMinor: bigint;
  feePaidMinor: bigint;
}

// ---- reading a product from the wire ----

/** Checks a product's terms as given on the wire; the principal bounds are parsed by the caller. */
export function parseLoanTerms(
  raw: {
    interest_rate_bps?: unknown;
    term_months?: unknown;
    amortisation?: unknown;
    origination_fee_bps?: unknown;
    grace_period_months?: unknown;
    penalty_rate_bps?: unknown;
  },
  currency: Currency,
): LoanTerms {
  const termMonths = requireWholeNumber(raw.term_months, 'term_months', 1, LOAN_TERM_MONTHS_MAX);
  const amortisation = requireOneOf(raw.amortisation, LOAN_AMORTISATIONS, 'amortisation');
  return {
    currency,
    interestRateBps: requireWholeNumber(raw.interest_rate_bps, 'interest_rate_bps', 0, LOAN_RATE_BPS_MAX),
    termMonths,
    amortisation,
    originationFeeBps: requireWholeNumber(
      raw.origination_fee_bps ?? 0,
      'origination_fee_bps',
      0,
      LOAN_FEE_BPS_MAX,
    ),
    gracePeriodMonths: requireWholeNumber(
      raw.grace_period_months ?? 0,
      'grace_period_months',
      0,
      termMonths - 1,
    ),
    penaltyRateBps: requireWholeNumber(raw.penalty_rate_bps ?? 0, 'penalty_rate_bps', 0, LOAN_RATE_BPS_MAX),
  };
}

/** A principal outside the product's bounds is refused with the bounds named. */
export function checkPrincipal(product: LoanProduct, principalMinor: bigint): void {
  if (principalMinor < product.minPrincipalMinor || principalMinor > product.maxPrincipalMinor) {
    throw validationError(
      'principal',
      `principal must be from ${formatAmount(product.minPrincipalMinor, product.currency)} to ${formatAmount(product.maxPrincipalMinor, product.currency)} ${product.currency} for product ${product.id}`,
      'out_of_range',
    );
  }
}

export function loanStateError(loanId: string, status: LoanStatus, action: string): AppError {
  return invalidStateTransition(
    'Loan not in that state',
    `Loan ${loanId} is ${status}; it cannot be ${action}.`,
  );
}

export const LOAN_REPAYMENT_SOURCES = ['manual', 'automatic'] as const;
export type LoanRepaymentSource = (typeof LOAN_REPAYMENT_SOURCES)[number];

export interface Loan extends LoanTerms {
  id: string;
  organizationId: string;
  productId: string;
  customerId: string;
  walletId: string;
  principalMinor: bigint;
  status: LoanStatus;
  statusReason: string | null;
  policyVersion: number;
  policyRule: string;
  policyDecision: 'allow' | 'deny' | 'require_approval';
  approvalId: string | null;
  disbursementEntryId: string | null;
  disbursedAt: Date | null;
  disbursedOn: string | null;
  processedThrough: string | null;
  penaltyBasisMinorDays: bigint;
  penaltyAccruedMinor: bigint;
  penaltyPaidMinor: bigint;
  daysPastDue: number;
  arrearsBucket: ArrearsBucket;
  writeOffEntryId: string | null;
  writtenOffMinor: bigint | null;
  writeOffReason: string | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
}

export interface LoanRepayment {
  id: string;
  organizationId: string;
  loanId: string;
  source: LoanRepaymentSource;
  day: string;
  amountMinor: bigint;
  penaltyMinor: bigint;
  feeMinor: bigint;
  interestMinor: bigint;
  principalMinor: bigint;
  journalEntryId: string;
  createdBy: string | null;
  createdAt: Date;
}
