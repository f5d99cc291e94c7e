/**
 * Lending, pure: what a loan's instalments leave owed, the allocation of a repayment (penalty, then each
 * instalment's fee, interest and principal, oldest instalment first), arrears (days past due and their
 * buckets) and the penalty accrued on overdue amounts day by day. No clock: days are arguments (UTC
 * `YYYY-MM-DD`, the organization's days). Rounding follows schedule.ts's rule.
 */

import { ARREARS_BUCKETS, type ArrearsBucket, type Instalment, type Loan } from './loans.ts';
import { BASIS_POINTS, daysBetween, roundHalfUp } from './schedule.ts';

/** Penalty accrues actual/365: an overdue amount pays rate / 365 of itself for each day it is overdue. */
export const PENALTY_DAYS_PER_YEAR = 365n;

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

/** Whether everything owed is paid: every instalment in full and the penalty accrued. */
export function isPaidOff(
  loan: Pick<Loan, 'penaltyAccruedMinor' | 'penaltyPaidMinor'>,
  instalments: readonly Instalment[],
): boolean {
  return loan.penaltyPaidMinor === loan.penaltyAccruedMinor && outstandingTotal(0n, instalments) === 0n;
}
