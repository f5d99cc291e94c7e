/**
 * Fee schedules, pure: every rule type against an independent computation in exact rationals (property-based,
 * fast-check), the rounding rule at its boundaries, tier selection, the stored form's round trip, the fee's
 * postings, and schedule validation naming the field at fault.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.ts';
import {
  chargeFor,
  decideFee,
  FEE_PERCENT_BPS_MAX,
  FEE_TIERS_MAX,
  type FeeCharge,
  type FeeRule,
  type FeeTier,
  feeRuleJson,
  feeRulesFromStored,
  parseFeeRules,
  percentageOf,
} from '../src/modules/fees/domain.ts';
import {
  applyPosting,
  isBalanced,
  postHoldPostings,
  reversalPostings,
  transferPostings,
  voidHoldPostings,
  walletBalances,
  ZERO_SUMS,
} from '../src/modules/ledger/domain/ledger.ts';

/** The largest amount a transfer may carry in any currency: 10^15 minor units. */
const AMOUNT_MINOR_MAX = 1_000_000_000_000_000n;
const PROPERTY_RUNS = 2_000;

/** An exact non-negative rational n/d, kept apart from the code under test: no shared helper. */
interface Rational {
  n: bigint;
  d: bigint;
}
const rational = (n: bigint, d = 1n): Rational => ({ n, d });
const times = (a: Rational, b: Rational): Rational => rational(a.n * b.n, a.d * b.d);
const plus = (a: Rational, b: Rational): Rational => rational(a.n * b.d + b.n * a.d, a.d * b.d);

/**
 * Round half up, stated as what it means rather than computed: the integer f with f − ½ ≤ x < f + ½. Found by
 * search around the truncation, then checked against that definition.
 */
function roundHalfUp(x: Rational): bigint {
  const truncated = x.n / x.d;
  for (const f of [truncated - 1n, truncated, truncated + 1n]) {
    // f − ½ ≤ n/d < f + ½  ⇔  (2f − 1)·d ≤ 2n < (2f + 1)·d
    if ((2n * f - 1n) * x.d <= 2n * x.n && 2n * x.n < (2n * f + 1n) * x.d) return f;
  }
  throw new Error('no integer within half of x');
}

/** The exact fee of a charge, as the rule is described in docs/FEES.md. */
function expectedFee(charge: FeeCharge, amountMinor: bigint): bigint {
  const percent = (bps: number) => roundHalfUp(times(rational(amountMinor), rational(BigInt(bps), 10_000n)));
  switch (charge.type) {
    case 'fixed':
      return charge.fixedMinor;
    case 'percentage': {
      const rounded = percent(charge.bps);
      const lowered = charge.maxMinor !== null && rounded > charge.maxMinor ? charge.maxMinor : rounded;
      return charge.minMinor !== null && lowered < charge.minMinor ? charge.minMinor : lowered;
    }
    case 'tiered': {
      // The band is found by counting the bounds the amount is above (bands are in increasing order).
      const above = charge.tiers.filter((t) => t.upToMinor !== null && amountMinor > t.upToMinor).length;
      const tier = charge.tiers[above] as FeeTier;
      return roundHalfUp(
        plus(rational(tier.fixedMinor), times(rational(amountMinor), rational(BigInt(tier.bps), 10_000n))),
      );
    }
  }
}

const amount = fc.bigInt({ min: 0n, max: AMOUNT_MINOR_MAX });
/** Amounts near a rounding boundary are where a wrong rule shows: multiples of 50, ±1. */
const boundaryAmount = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.constantFrom(-1n, 0n, 1n))
  .map(([k, d]) => (k * 50n + d < 0n ? 0n : k * 50n + d));
const anyAmount = fc.oneof(amount, boundaryAmount, fc.bigInt({ min: 0n, max: 100_000n }));
const bps = fc.oneof(fc.integer({ min: 0, max: FEE_PERCENT_BPS_MAX }), fc.constantFrom(0, 1, 50, 150, 9_999));
const feeMinor = fc.bigInt({ min: 0n, max: 10n ** 9n });

const fixedCharge: fc.Arbitrary<FeeCharge> = feeMinor.map((fixedMinor) => ({ type: 'fixed', fixedMinor }));
const percentageCharge: fc.Arbitrary<FeeCharge> = fc
  .tuple(bps, fc.option(feeMinor, { nil: null }), fc.option(feeMinor, { nil: null }))
  .map(([b, x, y]) => {
    const [minMinor, maxMinor] = x !== null && y !== null && y < x ? [y, x] : [x, y];
    return { type: 'percentage', bps: b, minMinor, maxMinor };
  });
const tieredChargeUpTo = (boundMax: bigint): fc.Arbitrary<FeeCharge> =>
  fc
    .uniqueArray(fc.bigInt({ min: 1n, max: boundMax }), { minLength: 0, maxLength: FEE_TIERS_MAX - 1 })
    .chain((bounds) => {
      const sorted = [...bounds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      return fc
        .array(fc.tuple(feeMinor, bps), { minLength: sorted.length + 1, maxLength: sorted.length + 1 })
        .map((parts) => ({
          type: 'tiered' as const,
          tiers: parts.map(([fixedMinor, b], i) => ({ upToMinor: sorted[i] ?? null, fixedMinor, bps: b })),
        }));
    });
const tieredCharge = tieredChargeUpTo(AMOUNT_MINOR_MAX);
const anyCharge = fc.oneof(fixedCharge, percentageCharge, tieredCharge);

describe('fee arithmetic against exact rationals', () => {
  it('a percentage is amount × bps / 10,000 rounded half up to the minor unit', () => {
    fc.assert(
      fc.property(anyAmount, bps, (a, b) => {
        expect(percentageOf(a, b)).toBe(roundHalfUp(rational(a * BigInt(b), 10_000n)));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('every charge is the exact fee of its rule', () => {
    fc.assert(
      fc.property(anyCharge, anyAmount, (charge, a) => {
        expect(chargeFor(charge, a)).toBe(expectedFee(charge, a));
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('a percentage fee never falls as the amount grows, and stays within its minimum and maximum', () => {
    fc.assert(
      fc.property(percentageCharge, anyAmount, anyAmount, (charge, x, y) => {
        const [low, high] = x <= y ? [x, y] : [y, x];
        expect(chargeFor(charge, low) <= chargeFor(charge, high)).toBe(true);
        if (charge.type !== 'percentage') return;
        const fee = chargeFor(charge, high);
        if (charge.minMinor !== null) expect(fee >= charge.minMinor).toBe(true);
        if (charge.maxMinor !== null && (charge.minMinor ?? 0n) <= charge.maxMinor)
          expect(fee <= charge.maxMinor).toBe(true);
      }),
      { numRuns: PROPERTY_RUNS },
    );
  });

  it('rounds half up at the boundary, and only the percentage part', () => {
    // 0.5 % of 101.00 KES (10,100 minor units) is 50.5 minor units: 51 (0.51 KES).
    expect(percentageOf(10_100n, 50)).toBe(51n);
    // Just below half rounds down, just above rounds up.
    expect(percentageOf(10_099n, 50)).toBe(50n);
    expect(percentageOf(10_101n, 50)).toBe(51n);
    expect(percentageOf(1n, 4_999)).toBe(0n);
    expect(percentageOf(1n, 5_000)).toBe(1n);
    expect(percentageOf(0n, FEE_PERCENT_BPS_MAX)).toBe(0n);
    expect(percentageOf(AMOUNT_MINOR_MAX, FEE_PERCENT_BPS_MAX)).toBe(AMOUNT_MINOR_MAX);
    const tiered: FeeCharge = {
      type: 'tiered',
      tiers: [
        { upToMinor: 100_000n, fixedMinor: 2_500n, bps: 0 },
        { upToMinor: 1_000_000n, fixedMinor: 1_000n, bps: 50 },
        { upToMinor: null, fixedMinor: 0n, bps: 30 },
      ],
    };
    expect(chargeFor(tiered, 100_000n)).toBe(2_500n); // up_to is inclusive
    expect(chargeFor(tiered, 100_001n)).toBe(1_000n + 500n); // 0.5 % of 1,000.01 = 5.00005 → 5.00
    expect(chargeFor(tiered, 1_000_001n)).toBe(3_000n); // 0.3 % of 10,000.01 = 30.00003 → 30.00
  });
});

describe('a schedule decides by rail and currency', () => {
  const rules = parseFeeRules([
    {
      id: 'mm_kes',
      rail: 'mobile_money',
      currency: 'KES',
      type: 'percentage',
      percent_bps: 150,
      min: '10.00',
    },
    { id: 'internal_kes', rail: 'internal', currency: 'KES', type: 'fixed', fixed: '5.00' },
  ]);
  const schedule = { version: 4, rules };

  it('names the version and rule, or no rule and no fee', () => {
    expect(decideFee(schedule, { rail: 'mobile_money', currency: 'KES', amountMinor: 100_000n })).toEqual({
      feeMinor: 1_500n,
      scheduleVersion: 4,
      rule: 'mm_kes',
    });
    expect(decideFee(schedule, { rail: 'mobile_money', currency: 'KES', amountMinor: 100n })).toEqual({
      feeMinor: 1_000n,
      scheduleVersion: 4,
      rule: 'mm_kes',
    });
    expect(decideFee(schedule, { rail: 'bank', currency: 'KES', amountMinor: 100_000n })).toEqual({
      feeMinor: 0n,
      scheduleVersion: 4,
      rule: null,
    });
    expect(decideFee(schedule, { rail: 'internal', currency: 'UGX', amountMinor: 100n }).rule).toBeNull();
  });

  it('the stored form parses back to the same rules', () => {
    // One rule per rail that carries KES; rule amounts stay within KES's single-amount cap (10^14 minor units).
    const rails = ['mobile_money', 'bank', 'paybill', 'till', 'card', 'internal'] as const;
    const charge = fc.oneof(fixedCharge, percentageCharge, tieredChargeUpTo(100_000_000_000_000n));
    fc.assert(
      fc.property(fc.array(charge, { maxLength: rails.length }), (charges) => {
        const rules = charges.map(
          (c, i): FeeRule => ({
            id: `rule_${i}`,
            rail: rails[i] as FeeRule['rail'],
            currency: 'KES',
            charge: c,
          }),
        );
        const stored = JSON.parse(JSON.stringify(rules.map(feeRuleJson)));
        expect(feeRulesFromStored(stored)).toEqual(rules);
      }),
      { numRuns: 500 },
    );
  });

  it('a stored version stays readable where a new one would be refused (what the rails carry may change)', () => {
    const stored = [{ id: 'old', rail: 'till', currency: 'UGX', type: 'fixed', fixed: '100' }];
    expect(() => parseFeeRules(stored)).toThrow(AppError);
    expect(feeRulesFromStored(stored)).toHaveLength(1);
    expect(
      decideFee(
        { version: 3, rules: feeRulesFromStored(stored) },
        { rail: 'till', currency: 'UGX', amountMinor: 1n },
      ),
    ).toEqual({
      feeMinor: 100n,
      scheduleVersion: 3,
      rule: 'old',
    });
  });
});

describe('the fee in the transfer’s entries', () => {
  const sums = (postings: ReturnType<typeof transferPostings>) => {
    const by = new Map<string, typeof ZERO_SUMS>();
    for (const p of postings) by.set(p.accountId, applyPosting(by.get(p.accountId) ?? ZERO_SUMS, p));
    return by;
  };

  it('holds amount + fee, posts the fee to fee income with the amount, releases it all on a void', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: AMOUNT_MINOR_MAX }), feeMinor, (a, f) => {
        const fee = { accountId: 'fees', amountMinor: f };
        const hold = transferPostings('pending', 'wallet', 'clearing', a, 'KES', fee);
        expect(isBalanced(hold)).toBe(true);
        expect(hold.length).toBe(f > 0n ? 3 : 2);
        const held = sums(hold);
        expect(held.get('wallet')?.debitsPending).toBe(a + f);
        const settled = [...hold, ...postHoldPostings(hold)];
        expect(isBalanced(postHoldPostings(hold))).toBe(true);
        const after = sums(settled);
        expect(walletBalances(after.get('wallet') ?? ZERO_SUMS).currentMinor).toBe(-(a + f));
        expect(after.get('clearing')?.creditsPosted).toBe(a);
        expect(after.get('fees')?.creditsPosted ?? 0n).toBe(f);
        const voided = sums([...hold, ...voidHoldPostings(hold)]);
        for (const account of voided.values()) {
          expect(account.debitsPending + account.creditsPending + account.debitsPosted).toBe(0n);
        }
        // The return gives the fee back with the amount.
        const returned = sums([...settled, ...reversalPostings('clearing', 'wallet', a, 'KES', fee)]);
        expect(walletBalances(returned.get('wallet') ?? ZERO_SUMS).currentMinor).toBe(0n);
        const fees = returned.get('fees') ?? ZERO_SUMS;
        expect(fees.creditsPosted - fees.debitsPosted).toBe(0n);
      }),
      { numRuns: 500 },
    );
  });
});

describe('schedule validation names the field at fault', () => {
  const base = { id: 'r', rail: 'mobile_money', currency: 'KES' };
  const cases: [unknown, string, string][] = [
    [[{ ...base, type: 'fixed' }], 'rules.0.fixed', 'missing'],
    [[{ ...base, type: 'fixed', fixed: '1.001' }], 'rules.0.fixed', 'too_precise'],
    [[{ ...base, type: 'fixed', fixed: '-1.00' }], 'rules.0.fixed', 'not_positive'],
    [[{ ...base, type: 'percentage', percent_bps: 10_001 }], 'rules.0.percent_bps', 'out_of_range'],
    [[{ ...base, type: 'percentage', percent_bps: 1.5 }], 'rules.0.percent_bps', 'out_of_range'],
    [
      [{ ...base, type: 'percentage', percent_bps: 10, min: '5.00', max: '4.00' }],
      'rules.0.max',
      'out_of_range',
    ],
    [[{ ...base, type: 'fixed', fixed: '1.00', percent_bps: 5 }], 'rules.0.percent_bps', 'unexpected'],
    [[{ ...base, type: 'fixed', fixed: '1.00', colour: 'red' }], 'rules.0.colour', 'unknown_field'],
    [[{ ...base, type: 'flat', fixed: '1.00' }], 'rules.0.type', 'invalid_value'],
    [[{ ...base, rail: 'pigeon', type: 'fixed', fixed: '1.00' }], 'rules.0.rail', 'invalid_value'],
    [[{ ...base, currency: 'USD', type: 'fixed', fixed: '1.00' }], 'rules.0.currency', 'unsupported_by_rail'],
    [[{ ...base, id: 'Bad Id', type: 'fixed', fixed: '1.00' }], 'rules.0.id', 'invalid_format'],
    [
      [
        { ...base, type: 'fixed', fixed: '1.00' },
        { ...base, id: 's', type: 'fixed', fixed: '2.00' },
      ],
      'rules.1.currency',
      'duplicate',
    ],
    [
      [
        { ...base, type: 'fixed', fixed: '1.00' },
        { ...base, rail: 'bank', type: 'fixed', fixed: '200.00' },
      ],
      'rules.1.id',
      'duplicate',
    ],
    [[{ ...base, type: 'tiered', tiers: [] }], 'rules.0.tiers', 'invalid_type'],
    [
      [{ ...base, type: 'tiered', tiers: [{ up_to: '10.00', fixed: '1.00' }] }],
      'rules.0.tiers.0.up_to',
      'unexpected',
    ],
    [
      [{ ...base, type: 'tiered', tiers: [{ fixed: '1.00' }, { fixed: '2.00' }] }],
      'rules.0.tiers.0.up_to',
      'missing',
    ],
    [
      [
        {
          ...base,
          type: 'tiered',
          tiers: [{ up_to: '10.00', fixed: '1.00' }, { up_to: '10.00', fixed: '1.00' }, {}],
        },
      ],
      'rules.0.tiers.1.up_to',
      'out_of_range',
    ],
    [
      [{ ...base, type: 'tiered', tiers: [{ up_to: '10.00', fixed: '1.00' }, {}] }],
      'rules.0.tiers.1',
      'missing',
    ],
    [[{ ...base, type: 'fixed', fixed: '1000000000000.01' }], 'rules.0.fixed', 'out_of_range'],
  ];
  it.each(cases)('%j → %s %s', (rules, param, code) => {
    let thrown: unknown;
    try {
      parseFeeRules(rules);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).param).toBe(param);
    expect((thrown as AppError).errors[0]?.code).toBe(code);
  });
});
