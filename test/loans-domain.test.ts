/**
 * Loan arithmetic against an independent computation in exact rationals: the schedule's parts, the level
 * instalment, the penalty, the allocation order, arrears buckets and due dates.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocateRepayment,
  arrearsOn,
  bucketOf,
  penaltyOwed,
} from '../src/modules/lending/domain/balances.ts';
import { type Instalment, LOAN_AMORTISATIONS, type LoanTerms } from '../src/modules/lending/domain/loans.ts';
import { addMonths, annuityInstalment, computeSchedule } from '../src/modules/lending/domain/schedule.ts';

/** An exact rational, written here independently of the code under test. */
class Q {
  readonly n: bigint;
  readonly d: bigint;
  constructor(n: bigint, d = 1n) {
    if (d === 0n) throw new Error('zero denominator');
    const sign = d < 0n ? -1n : 1n;
    const g = Q.gcd(n < 0n ? -n : n, d < 0n ? -d : d) || 1n;
    this.n = (sign * n) / g;
    this.d = (sign * d) / g;
  }
  static gcd(a: bigint, b: bigint): bigint {
    return b === 0n ? a : Q.gcd(b, a % b);
  }
  add(o: Q) {
    return new Q(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  sub(o: Q) {
    return new Q(this.n * o.d - o.n * this.d, this.d * o.d);
  }
  mul(o: Q) {
    return new Q(this.n * o.n, this.d * o.d);
  }
  div(o: Q) {
    return new Q(this.n * o.d, this.d * o.n);
  }
  pow(k: number) {
    let r = new Q(1n);
    for (let i = 0; i < k; i++) r = r.mul(this);
    return r;
  }
  /** Nearest integer, halves up (values here are non-negative). */
  round(): bigint {
    const floor = this.n / this.d;
    const rest = new Q(this.n - floor * this.d, this.d);
    return rest.n * 2n >= rest.d ? floor + 1n : floor;
  }
  cmp(o: Q) {
    const diff = this.sub(o).n;
    return diff === 0n ? 0 : diff > 0n ? 1 : -1;
  }
}

const monthly = (bps: number) => new Q(BigInt(bps), 120_000n);

const termsArb = fc
  .record({
    interestRateBps: fc.integer({ min: 0, max: 20_000 }),
    termMonths: fc.integer({ min: 1, max: 60 }),
    amortisation: fc.constantFrom(...LOAN_AMORTISATIONS),
    originationFeeBps: fc.integer({ min: 0, max: 1_000 }),
    grace: fc.integer({ min: 0, max: 12 }),
    penaltyRateBps: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(
    (r): LoanTerms => ({
      currency: 'KES',
      interestRateBps: r.interestRateBps,
      termMonths: r.termMonths,
      amortisation: r.amortisation,
      originationFeeBps: r.originationFeeBps,
      gracePeriodMonths: Math.min(r.grace, r.termMonths - 1),
      penaltyRateBps: r.penaltyRateBps,
    }),
  );
const principalArb = fc.bigInt({ min: 1n, max: 10_000_000_000n });
const dayArb = fc
  .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

describe('loan schedules', () => {
  it('repays exactly the principal, never a negative part, with the fee on the first instalment', () => {
    fc.assert(
      fc.property(termsArb, principalArb, dayArb, (terms, principal, start) => {
        const schedule = computeSchedule(terms, principal, start);
        expect(schedule).toHaveLength(terms.termMonths);
        expect(schedule.reduce((s, i) => s + i.principalMinor, 0n)).toBe(principal);
        for (const i of schedule) {
          expect(i.principalMinor >= 0n && i.interestMinor >= 0n && i.feeMinor >= 0n).toBe(true);
          if (i.number <= terms.gracePeriodMonths) expect(i.principalMinor).toBe(0n);
        }
        const fee = new Q(principal * BigInt(terms.originationFeeBps), 10_000n).round();
        expect(schedule.map((i) => i.feeMinor)).toEqual(schedule.map((_, k) => (k === 0 ? fee : 0n)));
        for (let k = 1; k < schedule.length; k++) {
          expect((schedule[k] as Instalment).dueDate > (schedule[k - 1] as Instalment).dueDate).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('flat: the interest is principal × rate × term / 12 rounded once, spread evenly, the last taking the rest', () => {
    fc.assert(
      fc.property(termsArb, principalArb, (raw, principal) => {
        const terms = { ...raw, amortisation: 'flat' as const };
        const schedule = computeSchedule(terms, principal, '2027-01-15');
        const exact = new Q(principal)
          .mul(monthly(terms.interestRateBps))
          .mul(new Q(BigInt(terms.termMonths)));
        expect(schedule.reduce((s, i) => s + i.interestMinor, 0n)).toBe(exact.round());
        const first = schedule[0] as Instalment;
        for (const i of schedule.slice(0, -1)) expect(i.interestMinor).toBe(first.interestMinor);
        const amortising = terms.termMonths - terms.gracePeriodMonths;
        const each = new Q(principal, BigInt(amortising));
        for (const i of schedule.slice(terms.gracePeriodMonths, -1)) {
          // Each even part is the exact share rounded down: within one unit below it.
          expect(new Q(i.principalMinor).cmp(each) <= 0).toBe(true);
          expect(new Q(i.principalMinor + 1n).cmp(each) > 0).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('declining balance: interest is each balance × the monthly rate, and the level instalment is the exact annuity rounded', () => {
    fc.assert(
      fc.property(termsArb, principalArb, (raw, principal) => {
        const terms = { ...raw, amortisation: 'declining_balance' as const };
        const schedule = computeSchedule(terms, principal, '2027-03-31');
        const i = monthly(terms.interestRateBps);
        const m = terms.termMonths - terms.gracePeriodMonths;
        const exactLevel =
          terms.interestRateBps === 0
            ? new Q(principal, BigInt(m))
            : new Q(principal).mul(i).div(new Q(1n).sub(new Q(1n).div(new Q(1n).add(i).pow(m))));
        expect(annuityInstalment(principal, terms.interestRateBps, m)).toBe(exactLevel.round());
        let balance = principal;
        for (const row of schedule) {
          expect(row.interestMinor).toBe(new Q(balance).mul(i).round());
          balance -= row.principalMinor;
          expect(balance >= 0n).toBe(true);
        }
        expect(balance).toBe(0n);
        // Before the last, each amortising instalment is the level one (unless the balance ran out first).
        for (const row of schedule.slice(terms.gracePeriodMonths, -1)) {
          if (row.principalMinor > 0n) {
            expect(row.principalMinor + row.interestMinor <= exactLevel.round()).toBe(true);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('falls due monthly on the same day, or the last day of a shorter month', () => {
    expect(addMonths('2027-01-31', 1)).toBe('2027-02-28');
    expect(addMonths('2028-01-31', 1)).toBe('2028-02-29');
    expect(addMonths('2027-01-31', 3)).toBe('2027-04-30');
    expect(addMonths('2027-11-15', 2)).toBe('2028-01-15');
  });
});

describe('repayment allocation', () => {
  const instalmentsArb = fc
    .tuple(termsArb, principalArb)
    .map(([terms, principal]) =>
      computeSchedule(terms, principal, '2027-01-01').map(
        (i): Instalment => ({ ...i, principalPaidMinor: 0n, interestPaidMinor: 0n, feePaidMinor: 0n }),
      ),
    );

  it('pays penalty, then each instalment fee, interest, principal in order, exactly the amount', () => {
    fc.assert(
      fc.property(
        instalmentsArb,
        fc.bigInt({ min: 0n, max: 1_000_000n }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (instalments, penalty, share) => {
          const owed =
            penalty + instalments.reduce((s, i) => s + i.feeMinor + i.interestMinor + i.principalMinor, 0n);
          const amount = (owed * BigInt(Math.floor(share * 1_000_000))) / 1_000_000n;
          const a = allocateRepayment(penalty, instalments, amount);
          expect(a.penaltyMinor + a.feeMinor + a.interestMinor + a.principalMinor).toBe(amount);
          // Sequential order: nothing later is paid while anything earlier is still owed.
          const parts: [bigint, bigint][] = [[a.penaltyMinor, penalty]];
          for (const i of a.instalments) {
            parts.push([i.feePaidMinor, i.feeMinor], [i.interestPaidMinor, i.interestMinor]);
            parts.push([i.principalPaidMinor, i.principalMinor]);
          }
          let short = false;
          for (const [paid, due] of parts) {
            if (short) expect(paid).toBe(0n);
            if (paid < due) short = true;
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses more than is outstanding', () => {
    const [i] = computeSchedule(
      {
        currency: 'KES',
        interestRateBps: 0,
        termMonths: 1,
        amortisation: 'flat',
        originationFeeBps: 0,
        gracePeriodMonths: 0,
        penaltyRateBps: 0,
      },
      100n,
      '2027-01-01',
    );
    const due = { ...(i as Instalment), principalPaidMinor: 0n, interestPaidMinor: 0n, feePaidMinor: 0n };
    expect(() => allocateRepayment(0n, [due], 101n)).toThrow(RangeError);
  });
});

describe('arrears and penalty', () => {
  it('counts days past due from the oldest unpaid due date, into the named buckets', () => {
    const row = (n: number, due: string, paid = false): Instalment => ({
      number: n,
      dueDate: due,
      principalMinor: 100n,
      interestMinor: 10n,
      feeMinor: 0n,
      principalPaidMinor: paid ? 100n : 0n,
      interestPaidMinor: paid ? 10n : 0n,
      feePaidMinor: 0n,
    });
    const rows = [row(1, '2027-01-10', true), row(2, '2027-02-10'), row(3, '2027-03-10')];
    expect(arrearsOn(rows, '2027-02-10')).toMatchObject({
      daysPastDue: 0,
      bucket: 'current',
      overdueMinor: 0n,
    });
    expect(arrearsOn(rows, '2027-02-11')).toMatchObject({
      daysPastDue: 1,
      bucket: 'dpd_1_30',
      overdueMinor: 110n,
    });
    expect(arrearsOn(rows, '2027-03-13')).toMatchObject({
      daysPastDue: 31,
      bucket: 'dpd_31_60',
      overdueMinor: 220n,
    });
    expect(bucketOf(60)).toBe('dpd_31_60');
    expect(bucketOf(61)).toBe('dpd_61_90');
    expect(bucketOf(90)).toBe('dpd_61_90');
    expect(bucketOf(91)).toBe('dpd_90_plus');
  });

  it('accrues penalty as the exact running total rounded half up', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 0n, max: 100_000_000n }), { maxLength: 400 }),
        fc.integer({ min: 0, max: 100_000 }),
        (daily, bps) => {
          const basis = daily.reduce((s, v) => s + v, 0n);
          const exact = daily.reduce((s, v) => s.add(new Q(v * BigInt(bps), 3_650_000n)), new Q(0n));
          expect(penaltyOwed(basis, bps)).toBe(exact.round());
        },
      ),
      { numRuns: 300 },
    );
  });
});
