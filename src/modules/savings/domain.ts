/**
 * Savings products, pure: the terms of a product (rate, day-count convention, minimum balance, notice or
 * fixed term), the exact daily accrual with its carried residual, monthly capitalisation, and the rules a
 * withdrawal must obey. Days are the organization's UTC calendar days, `YYYY-MM-DD`; money is integer minor
 * units; interest below one minor unit is kept as an exact fraction over ACCRUAL_DENOMINATOR, never a float.
 */

import { addDays } from '../../domain/days.ts';
import { AppError, validationError } from '../../domain/errors.ts';
import { requireOneOf } from '../../domain/json.ts';
import { nextDay } from '../testClock/domain.ts';

/** How a day counts as a fraction of a year. */
export const DAY_COUNT_CONVENTIONS = ['actual_365_fixed', 'actual_360', 'thirty_360'] as const;
export type DayCountConvention = (typeof DAY_COUNT_CONVENTIONS)[number];

/** How money leaves: at once, after a notice, or at the end of a fixed term (earlier with a penalty). */
export const SAVINGS_ACCESS_TYPES = ['instant', 'notice', 'fixed_term'] as const;
export type SavingsAccessType = (typeof SAVINGS_ACCESS_TYPES)[number];

/** Basis points in a whole: rates and penalties are in basis points (1 bp = 0.01 %). */
export const BASIS_POINTS_PER_WHOLE = 10_000n;
/** The highest annual rate a product may pay, in basis points (100 % a year). */
export const SAVINGS_RATE_BPS_MAX = 10_000;
/** The longest notice period, in days. */
export const SAVINGS_NOTICE_DAYS_MAX = 366;
/** The longest fixed term, in days (ten years). */
export const SAVINGS_TERM_DAYS_MAX = 3_660;
/** The highest early-withdrawal penalty, in basis points of the amount withdrawn. */
export const SAVINGS_PENALTY_BPS_MAX = 10_000;
/** A product's name, in characters. */
export const SAVINGS_PRODUCT_NAME_CHARS_MAX = 100;

/**
 * The fixed denominator of accrued interest: 10,000 basis points × lcm(365, 360) = 26,280. Every day's
 * interest, balance × rate × days / (10,000 × basis) with basis 365 or 360, is an integer number of these
 * parts, so the running sum is exact and the residual below one minor unit is carried without loss.
 */
export const ACCRUAL_DENOMINATOR = 262_800_000n;

/** A product's terms, fixed when it is created (its rate is effective-dated, see SavingsRate). */
export interface SavingsProductTerms {
  name: string;
  currency: string;
  dayCount: DayCountConvention;
  minimumBalanceMinor: bigint;
  access: SavingsAccessType;
  /** For `notice`: days between a notice and the money being available. */
  noticeDays: number | null;
  /** For `fixed_term`: days from opening to maturity. */
  termDays: number | null;
  /** For `fixed_term`: the penalty on a withdrawal before maturity, in basis points of the amount. */
  earlyWithdrawalPenaltyBps: number | null;
}

/** An annual rate in force from a day on, until the next one's day. Rates are appended, never changed. */
export interface SavingsRate {
  effectiveFrom: string;
  annualRateBps: number;
}

export function isDayCountConvention(value: unknown): value is DayCountConvention {
  return (DAY_COUNT_CONVENTIONS as readonly unknown[]).includes(value);
}

function wholeInRange(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** Checks a rate in basis points; `param` names the field. */
export function checkRateBps(value: unknown, param: string): number {
  if (!wholeInRange(value, 0, SAVINGS_RATE_BPS_MAX)) {
    throw validationError(
      param,
      `${param} is a whole number of basis points from 0 to ${SAVINGS_RATE_BPS_MAX}.`,
    );
  }
  return value;
}

/**
 * Checks the access fields together: `notice_days` only and always for `notice`; `term_days` and
 * `early_withdrawal_penalty_bps` only and always for `fixed_term`.
 */
export function checkAccess(input: {
  access: unknown;
  noticeDays: unknown;
  termDays: unknown;
  penaltyBps: unknown;
}): Pick<SavingsProductTerms, 'access' | 'noticeDays' | 'termDays' | 'earlyWithdrawalPenaltyBps'> {
  const access = requireOneOf(input.access, SAVINGS_ACCESS_TYPES, 'access');
  const only = (field: string, present: boolean, wanted: boolean, why: string) => {
    if (present && !wanted) throw validationError(field, `${field} applies only ${why}`, 'not_applicable');
    if (!present && wanted) throw validationError(field, `${field} is required ${why}`, 'missing');
  };
  only('notice_days', input.noticeDays !== undefined, access === 'notice', 'to a notice product');
  only('term_days', input.termDays !== undefined, access === 'fixed_term', 'to a fixed-term product');
  only(
    'early_withdrawal_penalty_bps',
    input.penaltyBps !== undefined,
    access === 'fixed_term',
    'to a fixed-term product',
  );
  if (access === 'notice') {
    if (!wholeInRange(input.noticeDays, 1, SAVINGS_NOTICE_DAYS_MAX)) {
      throw validationError(
        'notice_days',
        `notice_days is a whole number from 1 to ${SAVINGS_NOTICE_DAYS_MAX}.`,
      );
    }
    return { access, noticeDays: input.noticeDays, termDays: null, earlyWithdrawalPenaltyBps: null };
  }
  if (access === 'fixed_term') {
    if (!wholeInRange(input.termDays, 1, SAVINGS_TERM_DAYS_MAX)) {
      throw validationError('term_days', `term_days is a whole number from 1 to ${SAVINGS_TERM_DAYS_MAX}.`);
    }
    if (!wholeInRange(input.penaltyBps, 0, SAVINGS_PENALTY_BPS_MAX)) {
      throw validationError(
        'early_withdrawal_penalty_bps',
        `early_withdrawal_penalty_bps is a whole number of basis points from 0 to ${SAVINGS_PENALTY_BPS_MAX}.`,
      );
    }
    return {
      access,
      noticeDays: null,
      termDays: input.termDays,
      earlyWithdrawalPenaltyBps: input.penaltyBps,
    };
  }
  return { access: 'instant', noticeDays: null, termDays: null, earlyWithdrawalPenaltyBps: null };
}

/** The day before `day`. */
export function previousDay(day: string): string {
  return addDays(day, -1);
}

/** True when `day` is the last of its calendar month: the day a month's interest is capitalised. */
export function isMonthEnd(day: string): boolean {
  return nextDay(day).slice(8, 10) === '01';
}

function dayParts(day: string): [number, number, number] {
  return [Number(day.slice(0, 4)), Number(day.slice(5, 7)), Number(day.slice(8, 10))];
}

/**
 * 30/360 (the ISDA 2006 "30/360" bond basis) days between two dates: a 31st counts as the 30th, and an end
 * on the 31st counts as the 30th when the start is the 30th or 31st. A month counts 30, a year 360.
 */
export function days30360(from: string, to: string): number {
  const [y1, m1, d1Raw] = dayParts(from);
  const [y2, m2, d2Raw] = dayParts(to);
  const d1 = Math.min(d1Raw, 30);
  const d2 = d2Raw === 31 && d1 === 30 ? 30 : d2Raw;
  return 360 * (y2 - y1) + 30 * (m2 - m1) + (d2 - d1);
}

/**
 * The part of a year one day counts for under a convention, as days / basis: actual/365 fixed counts each
 * day 1/365 (a leap year's 366 days earn 366/365 of the rate), actual/360 each day 1/360. 30/360 counts what
 * the day adds to its month's 30/360 days since the month began: 1 a day up to the 30th, 0 for a 31st, and
 * the month's remainder on the last day of February (3 days, or 2 in a leap year); so every month counts
 * 30/360 and a year 360/360.
 */
export function dayFraction(convention: DayCountConvention, day: string): { days: number; basis: number } {
  switch (convention) {
    case 'actual_365_fixed':
      return { days: 1, basis: 365 };
    case 'actual_360':
      return { days: 1, basis: 360 };
    case 'thirty_360': {
      const monthStart = `${day.slice(0, 8)}01`;
      return { days: days30360(monthStart, nextDay(day)) - days30360(monthStart, day), basis: 360 };
    }
  }
}

/** The rate in force on `day`: the latest effective on or before it (rates sorted by day, ascending). */
export function rateOn(rates: readonly SavingsRate[], day: string): SavingsRate | undefined {
  let found: SavingsRate | undefined;
  for (const rate of rates) {
    if (rate.effectiveFrom <= day) found = rate;
    else break;
  }
  return found;
}

/** One day's accrual as decided: what it was computed on, and the interest in parts of ACCRUAL_DENOMINATOR. */
export interface DayAccrual {
  day: string;
  balanceMinor: bigint;
  annualRateBps: number;
  days: number;
  basis: number;
  /** balance × rate × days / (10,000 × basis), exactly, in parts of ACCRUAL_DENOMINATOR. */
  parts: bigint;
}

/**
 * A day's interest on a closing balance: nothing on a balance at or below zero. Exact: the product of
 * integers divided by a basis that divides ACCRUAL_DENOMINATOR.
 */
export function accrueDay(
  day: string,
  balanceMinor: bigint,
  annualRateBps: number,
  convention: DayCountConvention,
): DayAccrual {
  const { days, basis } = dayFraction(convention, day);
  const scale = ACCRUAL_DENOMINATOR / (BASIS_POINTS_PER_WHOLE * BigInt(basis));
  const parts = balanceMinor > 0n ? balanceMinor * BigInt(annualRateBps) * BigInt(days) * scale : 0n;
  return { day, balanceMinor, annualRateBps, days, basis, parts };
}

/**
 * An account's accrued interest not yet capitalised: `parts` over ACCRUAL_DENOMINATOR, of which the whole
 * minor units (`payableMinor`, always floor(parts / ACCRUAL_DENOMINATOR)) are already booked as payable.
 */
export interface AccruedInterest {
  parts: bigint;
  payableMinor: bigint;
}

/** Adds a day's parts; `newlyPayableMinor` is the whole units the day took the sum across. */
export function addAccrual(
  accrued: AccruedInterest,
  dayParts: bigint,
): { accrued: AccruedInterest; newlyPayableMinor: bigint } {
  const parts = accrued.parts + dayParts;
  const payableMinor = parts / ACCRUAL_DENOMINATOR;
  return { accrued: { parts, payableMinor }, newlyPayableMinor: payableMinor - accrued.payableMinor };
}

/** Capitalises the whole units: they go to the account; the residual below one unit is carried on. */
export function capitalise(accrued: AccruedInterest): { capitalisedMinor: bigint; accrued: AccruedInterest } {
  return {
    capitalisedMinor: accrued.payableMinor,
    accrued: { parts: accrued.parts - accrued.payableMinor * ACCRUAL_DENOMINATOR, payableMinor: 0n },
  };
}

/** The day a fixed-term account opened on `openedOn` matures. */
export function maturityDay(openedOn: string, termDays: number): string {
  return addDays(openedOn, termDays);
}

/** A withdrawal notice as the rule sees it. */
export interface NoticeFacts {
  id: string;
  amountMinor: bigint;
  availableOn: string;
  status: 'open' | 'used';
}

export interface WithdrawalFacts {
  terms: SavingsProductTerms;
  today: string;
  /** The account's posted balance, as locked. */
  balanceMinor: bigint;
  amountMinor: bigint;
  /** For a fixed-term account: the day it matures. */
  maturesOn: string | null;
  /** The notice the withdrawal names, if any. */
  notice: NoticeFacts | null;
}

export interface WithdrawalDecision {
  penaltyMinor: bigint;
  /** Why this penalty: `early_withdrawal` before maturity, else `none`. */
  penaltyReason: 'none' | 'early_withdrawal';
}

/** 422 `savings_withdrawal_refused`: the product's rules refuse the withdrawal, `reason` saying which. */
export function withdrawalRefusal(detail: string, param: string, reason: string): AppError {
  return new AppError({
    status: 422,
    code: 'savings_withdrawal_refused',
    title: 'Withdrawal refused by the product’s rules',
    detail,
    param,
    extensions: { reason },
  });
}

/**
 * The early-withdrawal penalty on an amount: `bps` basis points of it, rounded UP to the minor unit. Rounded
 * up, a withdrawal split into parts never pays less in total than the whole would: each part's penalty is
 * at least its exact share, and the whole's is the least integer over the sum of the exact shares.
 */
export function earlyWithdrawalPenalty(amountMinor: bigint, bps: number): bigint {
  if (amountMinor <= 0n || bps <= 0) return 0n;
  const scaled = amountMinor * BigInt(bps);
  return (scaled + 9_999n) / 10_000n;
}

/**
 * Decides a withdrawal by the product's rules, or throws the refusal (422 `savings_withdrawal_refused` with
 * a stable `reason`): a notice product needs a notice that has run its period, is still open and covers
 * the amount; a fixed-term one before maturity pays the penalty; and what stays behind is nothing or at
 * least the minimum balance. Whether the balance covers amount and penalty is the posting rule's to decide.
 */
export function decideWithdrawal(facts: WithdrawalFacts): WithdrawalDecision {
  const { terms } = facts;
  if (terms.access === 'notice') {
    const notice = facts.notice;
    if (!notice) {
      throw withdrawalRefusal(
        `Money leaves this account ${terms.noticeDays} days after a notice: give one (POST …/notices), then withdraw naming it.`,
        'notice',
        'notice_required',
      );
    }
    if (notice.status !== 'open') {
      throw withdrawalRefusal(`Notice ${notice.id} is ${notice.status}.`, 'notice', 'notice_not_open');
    }
    if (notice.availableOn > facts.today) {
      throw withdrawalRefusal(
        `Notice ${notice.id} makes the money available on ${notice.availableOn}; today is ${facts.today}.`,
        'notice',
        'notice_period_running',
      );
    }
    if (facts.amountMinor > notice.amountMinor) {
      throw withdrawalRefusal(
        `The amount is more than notice ${notice.id} gave.`,
        'amount',
        'amount_exceeds_notice',
      );
    }
  } else if (facts.notice) {
    throw validationError('notice', 'only a notice product’s withdrawals name a notice', 'not_applicable');
  }
  const early = terms.access === 'fixed_term' && facts.maturesOn !== null && facts.today < facts.maturesOn;
  const penaltyMinor = early
    ? earlyWithdrawalPenalty(facts.amountMinor, terms.earlyWithdrawalPenaltyBps ?? 0)
    : 0n;
  const left = facts.balanceMinor - facts.amountMinor - penaltyMinor;
  if (left > 0n && left < terms.minimumBalanceMinor) {
    throw withdrawalRefusal(
      'The withdrawal would leave less than the product’s minimum balance: withdraw less, or everything.',
      'amount',
      'below_minimum_balance',
    );
  }
  return { penaltyMinor, penaltyReason: early && penaltyMinor > 0n ? 'early_withdrawal' : 'none' };
}
