/**
 * Lending, pure: loan products (rate, term, amortisation, fee, grace period, penalty rate), the repayment
 * schedule computed exactly in integer minor units, the allocation of a repayment (penalty, then each
 * instalment's fee, interest and principal, oldest instalment first), arrears (days past due and their
 * buckets) and the penalty accrued on overdue amounts day by day. No clock: days are arguments (UTC
 * `YYYY-MM-DD`, the organization's days).
 *
 * The rounding rule, everywhere: ROUND HALF UP to the minor unit of the exact rational value, and the last
 * instalment absorbs what rounding left over, so the principal parts sum to the principal exactly and the
 * interest parts of a flat loan sum to its rounded total interest exactly.
 */

import { AppError, validationError } from '../../domain/errors.ts';
import type { LOAN_EVENT_TYPES } from '../../domain/events.ts';
import { type Currency, formatAmount } from '../../domain/money.ts';

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
/** Basis points in a whole. */
export const BASIS_POINTS = 10_000n;
export const MONTHS_PER_YEAR = 12n;
/** Penalty accrues actual/365: an overdue amount pays rate / 365 of itself for each day it is overdue. */
export const PENALTY_DAYS_PER_YEAR = 365n;
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

/** The exact value num / den (both non-negative, den positive) rounded half up to an integer. */
export function roundHalfUp(num: bigint, den: bigint): bigint {
  if (num < 0n || den <= 0n) throw new RangeError('roundHalfUp takes a non-negative value');
  return (2n * num + den) / (2n * den);
}

/** A month's interest rate as a fraction r / D of the annual rate in basis points: D = 10,000 × 12. */
export const MONTHLY_RATE_DENOMINATOR = BASIS_POINTS * MONTHS_PER_YEAR;

/** The origination fee of a principal: principal × bps / 10,000, rounded half up. */
export function originationFee(principalMinor: bigint, feeBps: number): bigint {
  return roundHalfUp(principalMinor * BigInt(feeBps), BASIS_POINTS);
}

function daysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

/** The day `months` months after `day`, on the same day of the month or the month's last day if shorter. */
export function addMonths(day: string, months: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const total = y * 12 + (m - 1) + months;
  const year = Math.floor(total / 12);
  const month0 = total % 12;
  const date = Math.min(d, daysInMonth(year, month0));
  return new Date(Date.UTC(year, month0, date)).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/**
 * The level instalment of a declining-balance (annuity) loan of `principalMinor` over `months` at a monthly
 * rate r / D: P·r·(D+r)^m / (D·((D+r)^m − D^m)), exact, rounded half up; P / m at a zero rate.
 */
export function annuityInstalment(principalMinor: bigint, annualRateBps: number, months: number): bigint {
  const r = BigInt(annualRateBps);
  const m = BigInt(months);
  if (r === 0n) return roundHalfUp(principalMinor, m);
  const d = MONTHLY_RATE_DENOMINATOR;
  const grown = (d + r) ** m;
  return roundHalfUp(principalMinor * r * grown, d * (grown - d ** m));
}

/**
 * The schedule of a loan of `principalMinor` disbursed on `startDay`: instalment k falls due k months after
 * it. Flat: the interest is principal × annual rate × term / 12 on the original principal, rounded once,
 * spread evenly (the last instalment takes the remainder); the principal is spread evenly over the
 * instalments after the grace period (the last takes the remainder). Declining balance: each month's
 * interest is the balance × the monthly rate, rounded; during the grace period only interest is due; after
 * it, a level instalment (annuityInstalment) of which the principal part is what the interest leaves, and
 * the last instalment repays whatever balance is left. The origination fee is due with the first instalment.
 */
export function computeSchedule(
  terms: LoanTerms,
  principalMinor: bigint,
  startDay: string,
): ScheduledInstalment[] {
  const n = terms.termMonths;
  const g = terms.gracePeriodMonths;
  const m = n - g;
  if (principalMinor <= 0n || n < 1 || g < 0 || m < 1) throw new RangeError('invalid loan terms');
  const fee = originationFee(principalMinor, terms.originationFeeBps);
  const principalParts: bigint[] = [];
  const interestParts: bigint[] = [];
  if (terms.amortisation === 'flat') {
    const totalInterest = roundHalfUp(
      principalMinor * BigInt(terms.interestRateBps) * BigInt(n),
      MONTHLY_RATE_DENOMINATOR,
    );
    const interestEach = totalInterest / BigInt(n);
    const principalEach = principalMinor / BigInt(m);
    for (let k = 1; k <= n; k++) {
      interestParts.push(k < n ? interestEach : totalInterest - interestEach * BigInt(n - 1));
      principalParts.push(
        k <= g ? 0n : k < n ? principalEach : principalMinor - principalEach * BigInt(m - 1),
      );
    }
  } else {
    const r = BigInt(terms.interestRateBps);
    const level = annuityInstalment(principalMinor, terms.interestRateBps, m);
    let balance = principalMinor;
    for (let k = 1; k <= n; k++) {
      const interest = roundHalfUp(balance * r, MONTHLY_RATE_DENOMINATOR);
      let principal: bigint;
      if (k <= g) principal = 0n;
      else if (k === n) principal = balance;
      else {
        principal = level - interest;
        if (principal < 0n) principal = 0n;
        if (principal > balance) principal = balance;
      }
      balance -= principal;
      interestParts.push(interest);
      principalParts.push(principal);
    }
  }
  return principalParts.map((principal, i) => ({
    number: i + 1,
    dueDate: addMonths(startDay, i + 1),
    principalMinor: principal,
    interestMinor: interestParts[i] as bigint,
    feeMinor: i === 0 ? fee : 0n,
  }));
}

/** What is left to pay of an instalment. */
export function instalmentUnpaid(i: Instalment): { fee: bigint; interest: bigint; principal: bigint } {
  return {
    fee: i.feeMinor - i.feePaidMinor,
    interest: i.interestMinor - i.interestPaidMinor,
    principal: i.principalMinor - i.principalPaidMinor,
  };
}

function unpaidTotal(i: Instalment): bigint {
  const u = instalmentUnpaid(i);
  return u.fee + u.interest + u.principal;
}

/** What the borrower owes in all now: the penalty not paid and every instalment's unpaid parts. */
export function outstandingTotal(
  penaltyOutstandingMinor: bigint,
  instalments: readonly Instalment[],
): bigint {
  return instalments.reduce((sum, i) => sum + unpaidTotal(i), penaltyOutstandingMinor);
}

/** What is due on `day`: the penalty not paid and the unpaid parts of the instalments due on or before it. */
export function dueOn(
  penaltyOutstandingMinor: bigint,
  instalments: readonly Instalment[],
  day: string,
): bigint {
  return instalments
    .filter((i) => i.dueDate <= day)
    .reduce((sum, i) => sum + unpaidTotal(i), penaltyOutstandingMinor);
}

/** Principal not yet repaid. */
export function principalOutstanding(instalments: readonly Instalment[]): bigint {
  return instalments.reduce((sum, i) => sum + i.principalMinor - i.principalPaidMinor, 0n);
}

export interface Allocation {
  penaltyMinor: bigint;
  feeMinor: bigint;
  interestMinor: bigint;
  principalMinor: bigint;
  /** The instalments as they stand after the allocation. */
  instalments: Instalment[];
}

/**
 * Allocates `amountMinor` (at most what is outstanding): first to the penalty, then instalment by
 * instalment in due order, each instalment's fee, then its interest, then its principal. An amount beyond
 * what is due pays the next instalments ahead of their dates, in the same order (interest is not rebated).
 */
export function allocateRepayment(
  penaltyOutstandingMinor: bigint,
  instalments: readonly Instalment[],
  amountMinor: bigint,
): Allocation {
  if (amountMinor < 0n || amountMinor > outstandingTotal(penaltyOutstandingMinor, instalments)) {
    throw new RangeError('a repayment is allocated only up to what is outstanding');
  }
  let rest = amountMinor;
  const take = (owed: bigint) => {
    const paid = owed < rest ? owed : rest;
    rest -= paid;
    return paid;
  };
  const result: Allocation = {
    penaltyMinor: take(penaltyOutstandingMinor),
    feeMinor: 0n,
    interestMinor: 0n,
    principalMinor: 0n,
    instalments: [],
  };
  for (const instalment of [...instalments].sort((a, b) => a.number - b.number)) {
    const unpaid = instalmentUnpaid(instalment);
    const fee = take(unpaid.fee);
    const interest = take(unpaid.interest);
    const principal = take(unpaid.principal);
    result.feeMinor += fee;
    result.interestMinor += interest;
    result.principalMinor += principal;
    result.instalments.push({
      ...instalment,
      feePaidMinor: instalment.feePaidMinor + fee,
      interestPaidMinor: instalment.interestPaidMinor + interest,
      principalPaidMinor: instalment.principalPaidMinor + principal,
    });
  }
  return result;
}

export interface Arrears {
  /** Unpaid fee, interest and principal of instalments whose due date is before `day`. */
  overdueMinor: bigint;
  /** Of which principal and interest: what the penalty accrues on. */
  penaltyBaseMinor: bigint;
  daysPastDue: number;
  bucket: ArrearsBucket;
}

export function bucketOf(daysPastDue: number): ArrearsBucket {
  let bucket: ArrearsBucket = 'current';
  for (const b of ARREARS_BUCKETS) if (daysPastDue >= b.fromDays) bucket = b.name;
  return bucket;
}

/**
 * The arrears on `day`: an instalment still unpaid after its due date is overdue from the next day, and the
 * days past due count from the due date of the oldest unpaid instalment (1 on the day after it).
 */
export function arrearsOn(instalments: readonly Instalment[], day: string): Arrears {
  let overdueMinor = 0n;
  let penaltyBaseMinor = 0n;
  let oldest: string | undefined;
  for (const i of instalments) {
    if (i.dueDate >= day) continue;
    const u = instalmentUnpaid(i);
    const total = u.fee + u.interest + u.principal;
    if (total === 0n) continue;
    overdueMinor += total;
    penaltyBaseMinor += u.interest + u.principal;
    if (oldest === undefined || i.dueDate < oldest) oldest = i.dueDate;
  }
  const daysPastDue = oldest === undefined ? 0 : daysBetween(oldest, day);
  return { overdueMinor, penaltyBaseMinor, daysPastDue, bucket: bucketOf(daysPastDue) };
}

/**
 * The penalty owed in all on a loan whose overdue principal and interest, summed over every day they were
 * overdue, is `overdueMinorDays`: overdueMinorDays × rate / (10,000 × 365), rounded half up. Rounding the
 * running total (never each day's share) keeps a small overdue amount from accruing nothing.
 */
export function penaltyOwed(overdueMinorDays: bigint, penaltyRateBps: number): bigint {
  return roundHalfUp(overdueMinorDays * BigInt(penaltyRateBps), BASIS_POINTS * PENALTY_DAYS_PER_YEAR);
}

// ---- reading a product from the wire ----

function wholeNumber(raw: unknown, param: string, min: number, max: number): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) {
    throw validationError(param, `${param} must be a whole number from ${min} to ${max}`, 'out_of_range');
  }
  return raw;
}

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
  const termMonths = wholeNumber(raw.term_months, 'term_months', 1, LOAN_TERM_MONTHS_MAX);
  if (
    typeof raw.amortisation !== 'string' ||
    !(LOAN_AMORTISATIONS as readonly string[]).includes(raw.amortisation)
  ) {
    throw validationError(
      'amortisation',
      `amortisation must be one of: ${LOAN_AMORTISATIONS.join(', ')}`,
      'invalid_value',
    );
  }
  return {
    currency,
    interestRateBps: wholeNumber(raw.interest_rate_bps, 'interest_rate_bps', 0, LOAN_RATE_BPS_MAX),
    termMonths,
    amortisation: raw.amortisation as LoanAmortisation,
    originationFeeBps: wholeNumber(raw.origination_fee_bps ?? 0, 'origination_fee_bps', 0, LOAN_FEE_BPS_MAX),
    gracePeriodMonths: wholeNumber(raw.grace_period_months ?? 0, 'grace_period_months', 0, termMonths - 1),
    penaltyRateBps: wholeNumber(raw.penalty_rate_bps ?? 0, 'penalty_rate_bps', 0, LOAN_RATE_BPS_MAX),
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
  return new AppError({
    status: 409,
    code: 'invalid_state_transition',
    title: 'Loan not in that state',
    detail: `Loan ${loanId} is ${status}; it cannot be ${action}.`,
  });
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

/** Whether everything owed is paid: every instalment in full and the penalty accrued. */
export function isPaidOff(
  loan: Pick<Loan, 'penaltyAccruedMinor' | 'penaltyPaidMinor'>,
  instalments: readonly Instalment[],
): boolean {
  return loan.penaltyPaidMinor === loan.penaltyAccruedMinor && outstandingTotal(0n, instalments) === 0n;
}
