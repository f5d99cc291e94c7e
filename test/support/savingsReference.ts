/**
 * An independent computation of savings interest in exact rationals, for tests: its own calendar rules for
 * each convention's day fraction, its own fractions (bigint numerator and denominator, reduced), and a plain
 * simulation of daily accrual on the closing balance with the month's whole units capitalised at its end.
 */

export interface Fraction {
  n: bigint;
  d: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x === 0n ? 1n : x;
}

export function frac(n: bigint, d = 1n): Fraction {
  const g = gcd(n, d);
  return { n: n / g, d: d / g };
}

export function add(a: Fraction, b: Fraction): Fraction {
  return frac(a.n * b.d + b.n * a.d, a.d * b.d);
}

export function sub(a: Fraction, b: Fraction): Fraction {
  return frac(a.n * b.d - b.n * a.d, a.d * b.d);
}

export function mul(a: Fraction, b: Fraction): Fraction {
  return frac(a.n * b.n, a.d * b.d);
}

export function floorOf(a: Fraction): bigint {
  const q = a.n / a.d;
  return a.n < 0n && q * a.d !== a.n ? q - 1n : q;
}

export type Convention = 'actual_365_fixed' | 'actual_360' | 'thirty_360';

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The year fraction one day counts for, by calendar rules stated directly rather than by day counting. */
export function referenceDayFraction(convention: Convention, day: string): Fraction {
  if (convention === 'actual_365_fixed') return frac(1n, 365n);
  if (convention === 'actual_360') return frac(1n, 360n);
  const year = Number(day.slice(0, 4));
  const month = Number(day.slice(5, 7));
  const date = Number(day.slice(8, 10));
  if (date === 31) return frac(0n, 360n);
  const februaryLast = isLeap(year) ? 29 : 28;
  if (month === 2 && date === februaryLast) return frac(BigInt(30 - februaryLast + 1), 360n);
  return frac(1n, 360n);
}

export function dayAfter(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

function lastOfMonth(day: string): boolean {
  return dayAfter(day).endsWith('-01');
}

export interface ReferenceResult {
  balanceMinor: bigint;
  interestPaidMinor: bigint;
  /** Accrued and not yet capitalised, exactly (whole units and the residual). */
  accrued: Fraction;
  capitalisations: number;
}

/**
 * Accrues every day from `from` through `through` on the balance as it stands at each day's end (after any
 * deposit of that day, given by `deposits`, and any capitalisation of earlier months), with the rate of
 * `rateOn(day)` in basis points.
 */
export function referenceSavings(options: {
  from: string;
  through: string;
  openingMinor: bigint;
  convention: Convention;
  rateOn: (day: string) => number;
  deposits?: Map<string, bigint>;
  startAccrued?: Fraction;
}): ReferenceResult {
  let balance = options.openingMinor;
  let accrued = options.startAccrued ?? frac(0n);
  let paid = 0n;
  let capitalisations = 0;
  for (let day = options.from; day <= options.through; day = dayAfter(day)) {
    balance += options.deposits?.get(day) ?? 0n;
    if (balance > 0n) {
      const yearly = frac(balance * BigInt(options.rateOn(day)), 10_000n);
      accrued = add(accrued, mul(yearly, referenceDayFraction(options.convention, day)));
    }
    if (lastOfMonth(day)) {
      const whole = floorOf(accrued);
      if (whole > 0n) {
        balance += whole;
        paid += whole;
        accrued = sub(accrued, frac(whole));
        capitalisations++;
      }
    }
  }
  return { balanceMinor: balance, interestPaidMinor: paid, accrued, capitalisations };
}
