/**
 * Lending, pure: the repayment schedule computed exactly in integer minor units, and the calendar it falls
 * due on. No clock: days are arguments (UTC `YYYY-MM-DD`, the organization's days).
 *
 * The rounding rule, everywhere: ROUND HALF UP to the minor unit of the exact rational value, and the last
 * instalment absorbs what rounding left over, so the principal parts sum to the principal exactly and the
 * interest parts of a flat loan sum to its rounded total interest exactly.
 */

import type { LoanTerms, ScheduledInstalment } from './loans.ts';

/** Basis points in a whole. */
export const BASIS_POINTS = 10_000n;
export const MONTHS_PER_YEAR = 12n;

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
