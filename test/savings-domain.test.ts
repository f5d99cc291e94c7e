/**
 * Savings, pure: day-count conventions and daily accrual against an independent computation in exact
 * rationals (property-based, fast-check): no interest is created or lost over any period, the residual is
 * always below one minor unit, every month counts 30/360 under 30/360 and a year 360/360; and the withdrawal
 * rules (notice, fixed term's penalty, minimum balance) with their stable reasons.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/domain/days.ts';
import { AppError } from '../src/domain/errors.ts';
import {
  ACCRUAL_DENOMINATOR,
  type AccruedInterest,
  accrueDay,
  addAccrual,
  capitalise,
  DAY_COUNT_CONVENTIONS,
  dayFraction,
  decideWithdrawal,
  isMonthEnd,
  rateOn,
  type SavingsProductTerms,
} from '../src/modules/savings/domain.ts';
import {
  add,
  type Convention,
  dayAfter,
  type Fraction,
  frac,
  mul,
  referenceDayFraction,
  referenceSavings,
  sub,
} from './support/savingsReference.ts';

const dayArb = fc
  .date({ min: new Date('1999-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));
const conventionArb = fc.constantFrom(...DAY_COUNT_CONVENTIONS);

function asFraction(parts: bigint): Fraction {
  return frac(parts, ACCRUAL_DENOMINATOR);
}

describe('day-count conventions', () => {
  it('match the independent calendar rule for every day', () => {
    fc.assert(
      fc.property(conventionArb, dayArb, (convention, day) => {
        const { days, basis } = dayFraction(convention, day);
        expect(frac(BigInt(days), BigInt(basis))).toEqual(referenceDayFraction(convention, day));
      }),
      { numRuns: 2000 },
    );
  });

  it('count every month 30/360 and every year 360/360 under 30/360', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1999, max: 2099 }), (year) => {
        let total = 0;
        for (let month = 1; month <= 12; month++) {
          let inMonth = 0;
          for (let day = `${year}-${String(month).padStart(2, '0')}-01`; ; day = addDays(day, 1)) {
            inMonth += dayFraction('thirty_360', day).days;
            if (isMonthEnd(day)) break;
          }
          expect(inMonth).toBe(30);
          total += inMonth;
        }
        expect(total).toBe(360);
      }),
      { numRuns: 50 },
    );
  });
});

describe('accrual', () => {
  it('is each day exactly balance × rate × fraction, in whole parts of the denominator', () => {
    fc.assert(
      fc.property(
        conventionArb,
        dayArb,
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 15n }),
        fc.integer({ min: 0, max: 10_000 }),
        (convention, day, balance, rate) => {
          const accrual = accrueDay(day, balance, rate, convention);
          const expected =
            balance > 0n
              ? mul(frac(balance * BigInt(rate), 10_000n), referenceDayFraction(convention, day))
              : frac(0n);
          expect(asFraction(accrual.parts)).toEqual(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('over any period creates and loses nothing: capitalised + payable + residual is the exact sum', () => {
    fc.assert(
      fc.property(
        conventionArb,
        dayArb,
        fc.integer({ min: 1, max: 800 }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        fc.array(
          fc.record({ after: fc.integer({ min: 0, max: 800 }), bps: fc.integer({ min: 0, max: 10_000 }) }),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        fc.array(
          fc.record({ on: fc.integer({ min: 0, max: 800 }), minor: fc.bigInt({ min: 1n, max: 10n ** 9n }) }),
          {
            maxLength: 5,
          },
        ),
        (convention, start, length, opening, rateChanges, depositList) => {
          const rates = [...rateChanges]
            .map((r) => ({ effectiveFrom: addDays(start, r.after), annualRateBps: r.bps }))
            .sort((a, b) => (a.effectiveFrom < b.effectiveFrom ? -1 : 1))
            .filter((r, i, all) => i === 0 || all[i - 1]?.effectiveFrom !== r.effectiveFrom);
          rates[0] = { effectiveFrom: start, annualRateBps: rates[0]?.annualRateBps ?? 0 };
          const deposits = new Map<string, bigint>();
          for (const d of depositList) {
            const on = addDays(start, d.on);
            deposits.set(on, (deposits.get(on) ?? 0n) + d.minor);
          }
          const through = addDays(start, length - 1);

          // The implementation, day by day, as the day work runs it.
          let balance = opening;
          let accrued: AccruedInterest = { parts: 0n, payableMinor: 0n };
          let paid = 0n;
          let booked = 0n;
          let exact = frac(0n);
          for (let day = start; day <= through; day = dayAfter(day)) {
            balance += deposits.get(day) ?? 0n;
            const accrual = accrueDay(day, balance, rateOn(rates, day)?.annualRateBps ?? 0, convention);
            exact = add(exact, asFraction(accrual.parts));
            const next = addAccrual(accrued, accrual.parts);
            booked += next.newlyPayableMinor;
            accrued = next.accrued;
            expect(accrued.payableMinor).toBe(accrued.parts / ACCRUAL_DENOMINATOR);
            if (isMonthEnd(day)) {
              const done = capitalise(accrued);
              balance += done.capitalisedMinor;
              paid += done.capitalisedMinor;
              accrued = done.accrued;
              expect(accrued.parts < ACCRUAL_DENOMINATOR).toBe(true);
            }
          }
          const reference = referenceSavings({
            from: start,
            through,
            openingMinor: opening,
            convention: convention as Convention,
            rateOn: (day) => rateOn(rates, day)?.annualRateBps ?? 0,
            deposits,
          });
          expect(balance).toBe(reference.balanceMinor);
          expect(paid).toBe(reference.interestPaidMinor);
          expect(asFraction(accrued.parts)).toEqual(reference.accrued);
          // Nothing created or lost: what was paid and what is still accrued is everything that accrued.
          expect(add(frac(paid), asFraction(accrued.parts))).toEqual(exact);
          // Booked to payable is always the whole units accrued: paid plus what is payable now.
          expect(booked).toBe(paid + accrued.payableMinor);
          expect(sub(asFraction(accrued.parts), frac(accrued.payableMinor)).n >= 0n).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});

const instant: SavingsProductTerms = {
  name: 'Instant',
  currency: 'KES',
  dayCount: 'actual_365_fixed',
  minimumBalanceMinor: 100_000n,
  access: 'instant',
  noticeDays: null,
  termDays: null,
  earlyWithdrawalPenaltyBps: null,
};

function reasonOf(thunk: () => unknown): string | undefined {
  try {
    thunk();
  } catch (error) {
    if (error instanceof AppError) return error.extensions?.reason ?? error.code;
    throw error;
  }
  return undefined;
}

describe('withdrawal rules', () => {
  const base = { today: '2027-03-10', maturesOn: null, notice: null };

  it('keeps the minimum balance unless everything is taken', () => {
    const facts = { ...base, terms: instant, balanceMinor: 500_000n };
    expect(decideWithdrawal({ ...facts, amountMinor: 400_000n })).toEqual({
      penaltyMinor: 0n,
      penaltyReason: 'none',
    });
    expect(reasonOf(() => decideWithdrawal({ ...facts, amountMinor: 400_001n }))).toBe(
      'below_minimum_balance',
    );
    expect(decideWithdrawal({ ...facts, amountMinor: 500_000n }).penaltyMinor).toBe(0n);
  });

  it('needs an open notice whose period has run, covering the amount', () => {
    const terms: SavingsProductTerms = {
      ...instant,
      access: 'notice',
      noticeDays: 30,
      minimumBalanceMinor: 0n,
    };
    const notice = { id: 'svn_1', amountMinor: 1_000n, availableOn: '2027-03-10', status: 'open' as const };
    const facts = { ...base, terms, balanceMinor: 10_000n, amountMinor: 1_000n };
    expect(reasonOf(() => decideWithdrawal(facts))).toBe('notice_required');
    expect(
      reasonOf(() => decideWithdrawal({ ...facts, notice: { ...notice, availableOn: '2027-03-11' } })),
    ).toBe('notice_period_running');
    expect(reasonOf(() => decideWithdrawal({ ...facts, notice: { ...notice, status: 'used' } }))).toBe(
      'notice_not_open',
    );
    expect(reasonOf(() => decideWithdrawal({ ...facts, notice, amountMinor: 1_001n }))).toBe(
      'amount_exceeds_notice',
    );
    expect(decideWithdrawal({ ...facts, notice }).penaltyMinor).toBe(0n);
  });

  it('charges the early-withdrawal penalty before maturity only, rounded up', () => {
    const terms: SavingsProductTerms = {
      ...instant,
      access: 'fixed_term',
      termDays: 180,
      earlyWithdrawalPenaltyBps: 150,
      minimumBalanceMinor: 0n,
    };
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n }), (amount) => {
        const facts = { ...base, terms, balanceMinor: amount * 2n, amountMinor: amount };
        const early = decideWithdrawal({ ...facts, maturesOn: '2027-03-11' });
        // The ceiling of amount × 150 / 10,000, independently: the least integer not below it.
        const exact = frac(amount * 150n, 10_000n);
        const ceiling = exact.n / exact.d + (exact.n % exact.d === 0n ? 0n : 1n);
        expect(early.penaltyMinor).toBe(ceiling);
        expect(decideWithdrawal({ ...facts, maturesOn: '2027-03-10' }).penaltyMinor).toBe(0n);
      }),
      { numRuns: 500 },
    );
  });

  it('never charges less for a withdrawal split into parts than for the whole (100.00 pays 2.00; 20 × 0.24 too)', () => {
    const terms: SavingsProductTerms = {
      ...instant,
      access: 'fixed_term',
      termDays: 180,
      earlyWithdrawalPenaltyBps: 200,
      minimumBalanceMinor: 0n,
    };
    const penaltyOf = (amount: bigint, bps = 200) =>
      decideWithdrawal({
        ...base,
        terms: { ...terms, earlyWithdrawalPenaltyBps: bps },
        balanceMinor: amount * 2n,
        amountMinor: amount,
        maturesOn: '2027-03-11',
      }).penaltyMinor;
    expect(penaltyOf(10_000n)).toBe(200n);
    // The split seen: 20 withdrawals of 0.24 used to pay 0.00 each.
    expect(penaltyOf(24n)).toBe(1n);
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: 1n, max: 10n ** 9n }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 5_000 }),
        (parts, bps) => {
          const whole = parts.reduce((sum, part) => sum + part, 0n);
          const split = parts.reduce((sum, part) => sum + penaltyOf(part, bps), 0n);
          expect(split >= penaltyOf(whole, bps)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
