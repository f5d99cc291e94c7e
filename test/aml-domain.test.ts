/** The AML rules as pure functions: each type at its boundaries, the strongest action, parameter checks. */
import { describe, expect, it } from 'vitest';
import {
  type MovementTally,
  oldestListedMs,
  slidRange,
  type TallySpec,
  tallyKey,
  tallyList,
  windowRange,
} from '../src/domain/activityTally.ts';
import {
  type AmlRule,
  type AmlRuleParameters,
  type AmlTransferFacts,
  amlHistoryWindowSeconds,
  amlTallySpecs,
  evaluateAmlRules,
  strongestAction,
} from '../src/domain/decisions/aml.ts';
import { defaultAmlRules } from '../src/domain/decisions/amlDefaultRules.ts';
import { parseAmlParameters } from '../src/domain/decisions/amlRuleParameters.ts';
import type { AppError } from '../src/domain/errors.ts';

const AT = new Date('2026-11-24T12:00:00Z');
const minutesAgo = (m: number) => new Date(AT.getTime() - m * 60_000);

function rule(parameters: AmlRuleParameters, action: AmlRule['action'] = 'alert'): AmlRule {
  return {
    id: 'amlr_test',
    organizationId: 'org_test',
    name: parameters.type,
    parameters,
    action,
    enabled: true,
    version: 3,
    createdAt: AT,
    updatedAt: AT,
  };
}

function facts(overrides: Partial<AmlTransferFacts> = {}): AmlTransferFacts {
  return {
    amountMinor: 10_000n,
    currency: 'KES',
    at: AT,
    recentOutgoing: [],
    recentIncoming: [],
    counterpartyKnown: true,
    ...overrides,
  };
}

describe('AML rules', () => {
  it('single transfer threshold: at the threshold fires, one under does not, other currencies are not judged', () => {
    const r = rule({ type: 'single_transfer_threshold', currency: 'KES', amountMinor: 10_000n });
    expect(evaluateAmlRules([r], facts())).toHaveLength(1);
    expect(evaluateAmlRules([r], facts({ amountMinor: 9_999n }))).toEqual([]);
    expect(evaluateAmlRules([r], facts({ currency: 'UGX', amountMinor: 10_000_000n }))).toEqual([]);
    const [hit] = evaluateAmlRules([r], facts());
    expect(hit).toMatchObject({
      ruleId: 'amlr_test',
      ruleVersion: 3,
      action: 'alert',
      observed: { amount: '100.00', threshold: '100.00' },
    });
  });

  it('velocity counts this transfer and those inside the window only', () => {
    const r = rule({
      type: 'velocity',
      currency: 'KES',
      windowSeconds: 3_600,
      countMax: 2,
      amountMaxMinor: null,
    });
    const one = [{ amountMinor: 1n, at: minutesAgo(10) }];
    const two = [...one, { amountMinor: 1n, at: minutesAgo(59) }];
    expect(evaluateAmlRules([r], facts({ recentOutgoing: one }))).toEqual([]);
    expect(evaluateAmlRules([r], facts({ recentOutgoing: two }))[0]?.observed).toMatchObject({ count: 3 });
    const old = [...one, { amountMinor: 1n, at: minutesAgo(61) }];
    expect(evaluateAmlRules([r], facts({ recentOutgoing: old }))).toEqual([]);
    const sumRule = rule({
      type: 'velocity',
      currency: 'KES',
      windowSeconds: 3_600,
      countMax: null,
      amountMaxMinor: 15_000n,
    });
    expect(
      evaluateAmlRules([sumRule], facts({ recentOutgoing: [{ amountMinor: 5_000n, at: minutesAgo(1) }] })),
    ).toEqual([]);
    expect(
      evaluateAmlRules([sumRule], facts({ recentOutgoing: [{ amountMinor: 5_001n, at: minutesAgo(1) }] })),
    ).toHaveLength(1);
  });

  it('structuring fires on the count_min-th transfer just under the threshold', () => {
    const r = rule({
      type: 'structuring',
      currency: 'KES',
      thresholdMinor: 100_000n,
      marginBasisPoints: 1_000,
      countMin: 3,
      windowSeconds: 86_400,
    });
    const under = { amountMinor: 95_000n, at: minutesAgo(30) };
    expect(
      evaluateAmlRules([r], facts({ amountMinor: 90_000n, recentOutgoing: [under, under] })),
    ).toHaveLength(1);
    expect(evaluateAmlRules([r], facts({ amountMinor: 89_999n, recentOutgoing: [under, under] }))).toEqual(
      [],
    );
    expect(evaluateAmlRules([r], facts({ amountMinor: 100_000n, recentOutgoing: [under, under] }))).toEqual(
      [],
    );
    expect(evaluateAmlRules([r], facts({ amountMinor: 95_000n, recentOutgoing: [under] }))).toEqual([]);
  });

  it('rapid movement compares what leaves with what arrived in the window', () => {
    const r = rule({
      type: 'rapid_movement',
      currency: 'KES',
      windowSeconds: 86_400,
      shareBasisPoints: 9_000,
      amountMinMinor: 10_000n,
    });
    const arrived = [{ amountMinor: 100_000n, at: minutesAgo(5) }];
    expect(
      evaluateAmlRules([r], facts({ amountMinor: 90_000n, recentIncoming: arrived }))[0]?.observed,
    ).toMatchObject({
      share_bp: 9_000,
    });
    expect(evaluateAmlRules([r], facts({ amountMinor: 89_999n, recentIncoming: arrived }))).toEqual([]);
    expect(evaluateAmlRules([r], facts({ amountMinor: 90_000n }))).toEqual([]);
    expect(
      evaluateAmlRules(
        [r],
        facts({ amountMinor: 9_999n, recentIncoming: [{ amountMinor: 9_999n, at: AT }] }),
      ),
    ).toEqual([]);
  });

  it('a busy wallet: what the lists do not hold is counted per spec, added to what they hold', () => {
    const velocity = rule({
      type: 'velocity',
      currency: 'KES',
      windowSeconds: 3_600,
      countMax: 600,
      amountMaxMinor: 1_000_000n,
    });
    const structuring = rule({
      type: 'structuring',
      currency: 'KES',
      thresholdMinor: 100_000n,
      marginBasisPoints: 1_000,
      countMin: 520,
      windowSeconds: 86_400,
    });
    const rapid = rule({
      type: 'rapid_movement',
      currency: 'KES',
      windowSeconds: 86_400,
      shareBasisPoints: 9_000,
      amountMinMinor: 10_000n,
    });
    const specs = amlTallySpecs([velocity, structuring, rapid]);
    expect(specs).toEqual([
      { direction: 'outgoing', windowSeconds: 3_600 },
      { direction: 'outgoing', windowSeconds: 86_400, amountGteMinor: 90_000n, amountLtMinor: 100_000n },
      { direction: 'outgoing', windowSeconds: 86_400 },
      { direction: 'incoming', windowSeconds: 86_400 },
    ]);
    const counted = new Map<string, MovementTally>([
      [tallyKey(specs[0] as TallySpec), { count: 599, sumMinor: 500_000n }],
      [tallyKey(specs[1] as TallySpec), { count: 518, sumMinor: 49_000_000n }],
      [tallyKey(specs[2] as TallySpec), { count: 700, sumMinor: 900_000n }],
      [tallyKey(specs[3] as TallySpec), { count: 3, sumMinor: 1_000_000n }],
    ]);
    const unlisted = (spec: TallySpec) => counted.get(tallyKey(spec)) ?? { count: 0, sumMinor: 0n };
    // One listed (this batch's) 95,000 out: the counts are 599 + 1 + this one, 518 + 1 + this one.
    const busy = facts({
      amountMinor: 95_000n,
      recentOutgoing: [{ amountMinor: 95_000n, at: minutesAgo(1) }],
      unlisted,
    });
    const hits = evaluateAmlRules([velocity, structuring, rapid], busy);
    expect(hits.map((h) => [h.ruleType, h.observed.count ?? h.observed.share_bp])).toEqual([
      ['velocity', 601],
      ['structuring', 520],
      ['rapid_movement', 10_900],
    ]);
    expect(hits[0]?.observed.total).toBe('6900.00');
    expect(evaluateAmlRules([velocity], facts({ amountMinor: 95_000n, unlisted }))).toEqual([]);
  });

  it('tallies a list over a window and a band of amounts, the window’s start included and its end open', () => {
    const list = [
      { amountMinor: 5n, at: new Date(AT.getTime() + 1) },
      { amountMinor: 10n, at: AT },
      { amountMinor: 20n, at: minutesAgo(60) },
      { amountMinor: 40n, at: new Date(minutesAgo(60).getTime() - 1) },
    ];
    // Open at its end: the movement stamped a millisecond after AT (another clock's) counts.
    expect(tallyList(list, AT, { direction: 'outgoing', windowSeconds: 3_600 })).toEqual({
      count: 3,
      sumMinor: 35n,
    });
    expect(
      tallyList(list, AT, {
        direction: 'outgoing',
        windowSeconds: 7_200,
        amountGteMinor: 10n,
        amountLtMinor: 40n,
      }),
    ).toEqual({ count: 2, sumMinor: 30n });
    expect(oldestListedMs(list, AT, { direction: 'outgoing', windowSeconds: 3_600 })).toBe(
      minutesAgo(60).getTime(),
    );
    expect(oldestListedMs([], AT, { direction: 'outgoing', windowSeconds: 3_600 })).toBe(Infinity);
    const hour: TallySpec = { direction: 'outgoing', windowSeconds: 3_600 };
    expect(windowRange(hour, AT)).toEqual({ since: minutesAgo(60), before: null });
    // Moving the end on by a minute lets go of the window's first minute.
    expect(slidRange(hour, AT, new Date(AT.getTime() + 60_000))).toEqual({
      since: minutesAgo(60),
      before: minutesAgo(59),
    });
  });

  it('high value to a new counterparty needs both', () => {
    const r = rule({ type: 'new_counterparty_high_value', currency: 'KES', amountMinor: 10_000n });
    expect(evaluateAmlRules([r], facts({ counterpartyKnown: false }))).toHaveLength(1);
    expect(evaluateAmlRules([r], facts({ counterpartyKnown: true }))).toEqual([]);
    expect(evaluateAmlRules([r], facts({ counterpartyKnown: false, amountMinor: 9_999n }))).toEqual([]);
  });

  it('disabled rules are not evaluated; the strongest action wins', () => {
    const threshold = (action: AmlRule['action']) =>
      rule({ type: 'single_transfer_threshold', currency: 'KES', amountMinor: 1n }, action);
    expect(evaluateAmlRules([{ ...threshold('block'), enabled: false }], facts())).toEqual([]);
    const hits = evaluateAmlRules([threshold('alert'), threshold('block'), threshold('review')], facts());
    expect(strongestAction(hits)).toBe('block');
    expect(strongestAction([])).toBeUndefined();
  });

  it('the defaults cover KES, UGX, TZS and USD with every type, all alerting, and a day of history', () => {
    const defaults = defaultAmlRules();
    for (const currency of ['KES', 'UGX', 'TZS', 'USD']) {
      const own = defaults.filter((d) => d.parameters.currency === currency);
      expect(own.map((d) => d.parameters.type).sort()).toEqual([
        'new_counterparty_high_value',
        'rapid_movement',
        'single_transfer_threshold',
        'structuring',
        'velocity',
      ]);
    }
    expect(defaults.every((d) => d.action === 'alert' && d.enabled)).toBe(true);
    expect(amlHistoryWindowSeconds(defaults.map((d) => rule(d.parameters)))).toBe(86_400);
  });

  it('parses wire parameters strictly, naming the field', () => {
    expect(parseAmlParameters('velocity', { currency: 'KES', window_seconds: 60, count_max: 5 })).toEqual({
      type: 'velocity',
      currency: 'KES',
      windowSeconds: 60,
      countMax: 5,
      amountMaxMinor: null,
    });
    const paramOf = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return (error as AppError).param;
      }
      return undefined;
    };
    expect(paramOf(() => parseAmlParameters('velocity', { currency: 'KES', window_seconds: 60 }))).toBe(
      'parameters.count_max',
    );
    expect(
      paramOf(() => parseAmlParameters('velocity', { currency: 'KES', window_seconds: 0, count_max: 1 })),
    ).toBe('parameters.window_seconds');
    expect(
      paramOf(() => parseAmlParameters('velocity', { currency: 'KES', window_seconds: 60, count_max: 501 })),
    ).toBe('parameters.count_max');
    expect(
      paramOf(() => parseAmlParameters('single_transfer_threshold', { currency: 'KES', amount: '1.001' })),
    ).toBe('parameters.amount');
    expect(
      paramOf(() => parseAmlParameters('single_transfer_threshold', { currency: 'XXX', amount: '1' })),
    ).toBe('parameters.currency');
    expect(
      paramOf(() => parseAmlParameters('single_transfer_threshold', { currency: 'KES', amount: '1', x: 1 })),
    ).toBe('parameters.x');
    expect(paramOf(() => parseAmlParameters('structuring', { currency: 'KES', threshold: '1' }))).toBe(
      'parameters.margin_bp',
    );
  });
});
