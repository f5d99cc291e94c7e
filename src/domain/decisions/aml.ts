/**
 * AML transaction monitoring, pure: rules held as data per organization, evaluated over a new transfer and
 * its source wallet's recent activity. Each rule that fires returns a hit with what it observed; the
 * transfer's outcome is the strongest action among them (alert < review < block).
 */
import {
  addTallies,
  type Movement,
  type MovementTally,
  NO_MOVEMENTS,
  type TallySpec,
  tallyList,
} from '../activityTally.ts';
import { validationError } from '../errors.ts';
import { type Currency, formatAmount, isCurrency, parseAmount } from '../money.ts';

export const AML_RULE_TYPES = [
  'single_transfer_threshold',
  'velocity',
  'structuring',
  'rapid_movement',
  'new_counterparty_high_value',
] as const;
export type AmlRuleType = (typeof AML_RULE_TYPES)[number];

/** In increasing severity: an alert lets the transfer through, review holds it, block refuses it. */
export const AML_ACTIONS = ['alert', 'review', 'block'] as const;
export type AmlAction = (typeof AML_ACTIONS)[number];

/**
 * Earlier movements each way listed per wallet (the activity read per batch, and what a process keeps
 * between batches); a wallet with more in its window has them counted by the database instead.
 */
export const AML_HISTORY_TRANSFERS_MAX = 500;
/** The longest window a rule may look back: 30 days. */
export const AML_WINDOW_SECONDS_MAX = 30 * 24 * 3_600;
/** Basis points in a whole. */
export const BASIS_POINTS = 10_000;
/** A rule's name, for operators. */
export const AML_RULE_NAME_LENGTH_MAX = 100;

export type AmlRuleParameters =
  | { type: 'single_transfer_threshold'; currency: Currency; amountMinor: bigint }
  | {
      type: 'velocity';
      currency: Currency;
      windowSeconds: number;
      countMax: number | null;
      amountMaxMinor: bigint | null;
    }
  | {
      type: 'structuring';
      currency: Currency;
      thresholdMinor: bigint;
      marginBasisPoints: number;
      countMin: number;
      windowSeconds: number;
    }
  | {
      type: 'rapid_movement';
      currency: Currency;
      windowSeconds: number;
      shareBasisPoints: number;
      amountMinMinor: bigint;
    }
  | { type: 'new_counterparty_high_value'; currency: Currency; amountMinor: bigint };

export interface AmlRule {
  id: string;
  organizationId: string;
  name: string;
  parameters: AmlRuleParameters;
  action: AmlAction;
  enabled: boolean;
  /** 1 when created; every change adds one. Evidence names the version that decided. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

export type AmlMovement = Movement;

/** What the rules see of a new transfer and its source wallet. */
export interface AmlTransferFacts {
  amountMinor: bigint;
  currency: Currency;
  at: Date;
  /** Earlier transfers out of the wallet that did not fail, newest first. */
  recentOutgoing: readonly AmlMovement[];
  /** Money that arrived in the wallet, newest first. */
  recentIncoming: readonly AmlMovement[];
  /**
   * Earlier movements the lists do not hold, counted for each of amlTallySpecs(rules): a busy wallet's
   * window, tallied by the database. Absent when the lists hold the whole window.
   */
  unlisted?: ((spec: TallySpec) => MovementTally) | undefined;
  /** Whether the wallet paid this counterparty before. */
  counterpartyKnown: boolean;
}

export interface AmlHit {
  ruleId: string;
  ruleType: AmlRuleType;
  ruleVersion: number;
  ruleName: string;
  action: AmlAction;
  /** A sentence for operators. */
  reason: string;
  /** What was observed: decimal strings for money, integers for counts and seconds. */
  observed: Record<string, string | number>;
}

/** The earlier movements a spec counts: those listed, and those the lists do not hold. */
function earlier(facts: AmlTransferFacts, spec: TallySpec): MovementTally {
  const list = spec.direction === 'outgoing' ? facts.recentOutgoing : facts.recentIncoming;
  return addTallies(tallyList(list, facts.at, spec), facts.unlisted?.(spec) ?? NO_MOVEMENTS);
}

/** The band of amounts a structuring rule counts: within its margin under the threshold. */
function structuringBand(p: Extract<AmlRuleParameters, { type: 'structuring' }>): {
  gte: bigint;
  lt: bigint;
} {
  return {
    gte: p.thresholdMinor - (p.thresholdMinor * BigInt(p.marginBasisPoints)) / BigInt(BASIS_POINTS),
    lt: p.thresholdMinor,
  };
}

/** What a rule counts of the wallet's earlier activity (none for the rules that look at one transfer). */
function ruleTallySpecs(p: AmlRuleParameters): TallySpec[] {
  switch (p.type) {
    case 'velocity':
      return [{ direction: 'outgoing', windowSeconds: p.windowSeconds }];
    case 'structuring': {
      const band = structuringBand(p);
      return [
        {
          direction: 'outgoing',
          windowSeconds: p.windowSeconds,
          amountGteMinor: band.gte,
          amountLtMinor: band.lt,
        },
      ];
    }
    case 'rapid_movement':
      return [
        { direction: 'outgoing', windowSeconds: p.windowSeconds },
        { direction: 'incoming', windowSeconds: p.windowSeconds },
      ];
    default:
      return [];
  }
}

/** Every count the enabled rules need of a wallet's earlier activity. */
export function amlTallySpecs(rules: readonly AmlRule[]): TallySpec[] {
  return rules.filter((r) => r.enabled).flatMap((r) => ruleTallySpecs(r.parameters));
}

/** The rule's verdict on the transfer: a hit, or undefined. */
function evaluate(
  rule: AmlRule,
  facts: AmlTransferFacts,
): Omit<AmlHit, 'ruleId' | 'ruleType' | 'ruleVersion' | 'ruleName' | 'action'> | undefined {
  const p = rule.parameters;
  const money = (minor: bigint) => formatAmount(minor, facts.currency);
  switch (p.type) {
    case 'single_transfer_threshold':
      if (facts.amountMinor < p.amountMinor) return undefined;
      return {
        reason: `a single transfer of ${money(facts.amountMinor)} ${facts.currency}, at or above ${money(p.amountMinor)}`,
        observed: { amount: money(facts.amountMinor), threshold: money(p.amountMinor) },
      };
    case 'velocity': {
      const [spec] = ruleTallySpecs(p) as [TallySpec];
      const recent = earlier(facts, spec);
      const count = recent.count + 1;
      const total = recent.sumMinor + facts.amountMinor;
      const tooMany = p.countMax !== null && count > p.countMax;
      const tooMuch = p.amountMaxMinor !== null && total > p.amountMaxMinor;
      if (!tooMany && !tooMuch) return undefined;
      return {
        reason: `${count} transfers totalling ${money(total)} ${facts.currency} from the wallet within ${p.windowSeconds} s`,
        observed: {
          count,
          total: money(total),
          window_seconds: p.windowSeconds,
          ...(p.countMax !== null ? { count_max: p.countMax } : {}),
          ...(p.amountMaxMinor !== null ? { amount_max: money(p.amountMaxMinor) } : {}),
        },
      };
    }
    case 'structuring': {
      const floor = structuringBand(p).gte;
      if (facts.amountMinor < floor || facts.amountMinor >= p.thresholdMinor) return undefined;
      const [spec] = ruleTallySpecs(p) as [TallySpec];
      const count = earlier(facts, spec).count + 1;
      if (count < p.countMin) return undefined;
      return {
        reason: `${count} transfers between ${money(floor)} and ${money(p.thresholdMinor)} ${facts.currency} (just under the threshold) within ${p.windowSeconds} s`,
        observed: {
          count,
          band_from: money(floor),
          threshold: money(p.thresholdMinor),
          window_seconds: p.windowSeconds,
        },
      };
    }
    case 'rapid_movement': {
      if (facts.amountMinor < p.amountMinMinor) return undefined;
      const [leavingSpec, arrivedSpec] = ruleTallySpecs(p) as [TallySpec, TallySpec];
      const arrived = earlier(facts, arrivedSpec).sumMinor;
      if (arrived <= 0n) return undefined;
      const leaving = earlier(facts, leavingSpec).sumMinor + facts.amountMinor;
      if (leaving * BigInt(BASIS_POINTS) < arrived * BigInt(p.shareBasisPoints)) return undefined;
      return {
        reason: `${money(leaving)} ${facts.currency} leaving within ${p.windowSeconds} s of ${money(arrived)} arriving`,
        observed: {
          arrived: money(arrived),
          leaving: money(leaving),
          share_bp: Number((leaving * BigInt(BASIS_POINTS)) / arrived),
          window_seconds: p.windowSeconds,
        },
      };
    }
    case 'new_counterparty_high_value':
      if (facts.counterpartyKnown || facts.amountMinor < p.amountMinor) return undefined;
      return {
        reason: `${money(facts.amountMinor)} ${facts.currency} to a counterparty this wallet never paid before`,
        observed: { amount: money(facts.amountMinor), threshold: money(p.amountMinor) },
      };
  }
}

/** Every enabled rule of the transfer's currency, in the rules' order; the hits. */
export function evaluateAmlRules(rules: readonly AmlRule[], facts: AmlTransferFacts): AmlHit[] {
  const hits: AmlHit[] = [];
  for (const rule of applicableRules(rules, facts.currency)) {
    const verdict = evaluate(rule, facts);
    if (!verdict) continue;
    hits.push({
      ruleId: rule.id,
      ruleType: rule.parameters.type,
      ruleVersion: rule.version,
      ruleName: rule.name,
      action: rule.action,
      ...verdict,
    });
  }
  return hits;
}

/** The rules a transfer in this currency is evaluated against. */
export function applicableRules(rules: readonly AmlRule[], currency: Currency): AmlRule[] {
  return rules.filter((r) => r.enabled && r.parameters.currency === currency);
}

export function strongestAction(hits: readonly AmlHit[]): AmlAction | undefined {
  let strongest: AmlAction | undefined;
  for (const hit of hits) {
    if (strongest === undefined || AML_ACTIONS.indexOf(hit.action) > AML_ACTIONS.indexOf(strongest)) {
      strongest = hit.action;
    }
  }
  return strongest;
}

/** The longest window among enabled rules that look at history; 0 when none does. */
export function amlHistoryWindowSeconds(rules: readonly AmlRule[]): number {
  let longest = 0;
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const p = rule.parameters;
    if ('windowSeconds' in p) longest = Math.max(longest, p.windowSeconds);
  }
  return longest;
}

/** Whether any enabled rule needs to know if the counterparty is new. */
export function needsCounterpartyHistory(rules: readonly AmlRule[]): boolean {
  return rules.some((r) => r.enabled && r.parameters.type === 'new_counterparty_high_value');
}

type DefaultRule = Pick<AmlRule, 'name' | 'parameters' | 'action' | 'enabled'>;

/** Per currency, the amounts the defaults use (minor units): a large single transfer, and the rest from it. */
const DEFAULT_LARGE_TRANSFER_MINOR: Partial<Record<Currency, bigint>> = {
  KES: 100_000_000n, // 1,000,000.00 KES
  UGX: 30_000_000n, // 30,000,000 UGX
  TZS: 20_000_000_00n, // 20,000,000.00 TZS
  USD: 1_000_000n, // 10,000.00 USD
};
/** Transfers from one wallet in an hour before velocity alerts. */
const DEFAULT_VELOCITY_COUNT_MAX = 200;
const HOUR_SECONDS = 3_600;
const DAY_SECONDS = 24 * HOUR_SECONDS;

/**
 * The rules an organization starts with: every one alerts (none holds or blocks a transfer until an
 * operator says so), per currency with amounts scaled from a large single transfer L: a transfer of L or
 * more; more than 200 transfers or 2 L out of a wallet in an hour; three or more transfers within 10 % under
 * L in a day; 90 % of what arrived in a day leaving again, for transfers of L / 10 or more; L / 2 or more to
 * a counterparty the wallet never paid.
 */
export function defaultAmlRules(): DefaultRule[] {
  return Object.entries(DEFAULT_LARGE_TRANSFER_MINOR).flatMap(([currency, large]) => {
    const c = currency as Currency;
    const l = large as bigint;
    const rules: DefaultRule[] = [
      {
        name: `Large single transfer (${c})`,
        parameters: { type: 'single_transfer_threshold', currency: c, amountMinor: l },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Velocity per wallet, hourly (${c})`,
        parameters: {
          type: 'velocity',
          currency: c,
          windowSeconds: HOUR_SECONDS,
          countMax: DEFAULT_VELOCITY_COUNT_MAX,
          amountMaxMinor: 2n * l,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Structuring under the large-transfer threshold (${c})`,
        parameters: {
          type: 'structuring',
          currency: c,
          thresholdMinor: l,
          marginBasisPoints: 1_000,
          countMin: 3,
          windowSeconds: DAY_SECONDS,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `Rapid movement of arriving funds (${c})`,
        parameters: {
          type: 'rapid_movement',
          currency: c,
          windowSeconds: DAY_SECONDS,
          shareBasisPoints: 9_000,
          amountMinMinor: l / 10n,
        },
        action: 'alert',
        enabled: true,
      },
      {
        name: `High value to a new counterparty (${c})`,
        parameters: { type: 'new_counterparty_high_value', currency: c, amountMinor: l / 2n },
        action: 'alert',
        enabled: true,
      },
    ];
    return rules;
  });
}

/** A rule's parameters on the wire: snake_case, money as decimal strings at the currency's exponent. */
export function presentAmlParameters(p: AmlRuleParameters): Record<string, string | number | null> {
  const money = (minor: bigint) => formatAmount(minor, p.currency);
  switch (p.type) {
    case 'single_transfer_threshold':
    case 'new_counterparty_high_value':
      return { currency: p.currency, amount: money(p.amountMinor) };
    case 'velocity':
      return {
        currency: p.currency,
        window_seconds: p.windowSeconds,
        count_max: p.countMax,
        amount_max: p.amountMaxMinor === null ? null : money(p.amountMaxMinor),
      };
    case 'structuring':
      return {
        currency: p.currency,
        threshold: money(p.thresholdMinor),
        margin_bp: p.marginBasisPoints,
        count_min: p.countMin,
        window_seconds: p.windowSeconds,
      };
    case 'rapid_movement':
      return {
        currency: p.currency,
        window_seconds: p.windowSeconds,
        share_bp: p.shareBasisPoints,
        amount_min: money(p.amountMinMinor),
      };
  }
}

/** The fields each type takes on the wire, all required unless listed as optional. */
export const AML_PARAMETER_FIELDS: Record<AmlRuleType, { required: string[]; optional: string[] }> = {
  single_transfer_threshold: { required: ['currency', 'amount'], optional: [] },
  new_counterparty_high_value: { required: ['currency', 'amount'], optional: [] },
  velocity: { required: ['currency', 'window_seconds'], optional: ['count_max', 'amount_max'] },
  structuring: {
    required: ['currency', 'threshold', 'margin_bp', 'count_min', 'window_seconds'],
    optional: [],
  },
  rapid_movement: { required: ['currency', 'window_seconds', 'share_bp', 'amount_min'], optional: [] },
};

/**
 * Parses and checks a rule's wire parameters for its type; throws a 400 naming `parameters.<field>`. Money
 * must be positive at the currency's exponent, windows 1 s to AML_WINDOW_SECONDS_MAX, counts 1 to
 * AML_HISTORY_TRANSFERS_MAX (kept as published: counting itself is not bounded), basis points 1 to 10,000.
 */
export function parseAmlParameters(type: AmlRuleType, raw: Record<string, unknown>): AmlRuleParameters {
  const fields = AML_PARAMETER_FIELDS[type];
  for (const key of Object.keys(raw)) {
    if (!fields.required.includes(key) && !fields.optional.includes(key)) {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} is not a parameter of a ${type} rule`,
        'unknown_field',
      );
    }
  }
  for (const key of fields.required) {
    if (raw[key] === undefined || raw[key] === null) {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} is required for a ${type} rule`,
        'missing',
      );
    }
  }
  const currency = raw.currency;
  if (typeof currency !== 'string' || !isCurrency(currency)) {
    throw validationError(
      'parameters.currency',
      'parameters.currency must be a supported currency code',
      'invalid_value',
    );
  }
  const money = (key: string): bigint => {
    const value = raw[key];
    if (typeof value !== 'string') {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} must be a decimal string`,
        'invalid_type',
      );
    }
    return parseAmount(value, currency, `parameters.${key}`);
  };
  const integer = (key: string, min: number, max: number): number => {
    const value = raw[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw validationError(
        `parameters.${key}`,
        `parameters.${key} must be a whole number from ${min} to ${max}`,
        'out_of_range',
      );
    }
    return value;
  };
  const window = () => integer('window_seconds', 1, AML_WINDOW_SECONDS_MAX);
  switch (type) {
    case 'single_transfer_threshold':
    case 'new_counterparty_high_value':
      return { type, currency, amountMinor: money('amount') };
    case 'velocity': {
      const countMax =
        raw.count_max === undefined || raw.count_max === null
          ? null
          : integer('count_max', 1, AML_HISTORY_TRANSFERS_MAX);
      const amountMaxMinor =
        raw.amount_max === undefined || raw.amount_max === null ? null : money('amount_max');
      if (countMax === null && amountMaxMinor === null) {
        throw validationError(
          'parameters.count_max',
          'a velocity rule needs parameters.count_max, parameters.amount_max or both',
          'missing',
        );
      }
      return { type, currency, windowSeconds: window(), countMax, amountMaxMinor };
    }
    case 'structuring':
      return {
        type,
        currency,
        thresholdMinor: money('threshold'),
        marginBasisPoints: integer('margin_bp', 1, BASIS_POINTS),
        countMin: integer('count_min', 1, AML_HISTORY_TRANSFERS_MAX),
        windowSeconds: window(),
      };
    case 'rapid_movement':
      return {
        type,
        currency,
        windowSeconds: window(),
        shareBasisPoints: integer('share_bp', 1, BASIS_POINTS),
        amountMinMinor: money('amount_min'),
      };
  }
}

/** Parameters as stored (JSON, money as strings of minor units) and back. */
export function storedAmlParameters(p: AmlRuleParameters): Record<string, string | number | null> {
  const out: Record<string, string | number | null> = {};
  for (const [key, value] of Object.entries(p))
    out[key] = typeof value === 'bigint' ? value.toString() : value;
  return out;
}

const MONEY_KEYS = new Set(['amountMinor', 'amountMaxMinor', 'thresholdMinor', 'amountMinMinor']);

export function amlParametersFromStored(stored: Record<string, unknown>): AmlRuleParameters {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    out[key] = MONEY_KEYS.has(key) && value !== null ? BigInt(value as string) : value;
  }
  return out as unknown as AmlRuleParameters;
}
