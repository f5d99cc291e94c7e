/**
 * Fee schedules, pure: an organization's rules, one per (rail, currency), each charging a fixed amount, a
 * percentage with an optional minimum and maximum, or by amount band (tiers). Besides the transfer rails, a
 * rule may price `conversion` (mint and redeem), in the currency converted from. Versioned as a whole, like
 * policies: every transfer and conversion records the version and rule that decided its fee.
 *
 * Integer arithmetic only. Amounts are bigint minor units; a percentage is whole basis points (1 bp =
 * 0.01 %). The one rounding rule, ROUND HALF UP to the minor unit: the exact value amount × bps / 10,000 is
 * rounded to the nearest minor unit, and exactly half a minor unit rounds up (every value here is
 * non-negative, so up is away from zero). 0.5 % of 101.00 KES is 0.505 KES, charged as 0.51 KES. Only the
 * percentage part is rounded; fixed parts are exact, and a minimum or maximum applies after rounding.
 */
import { validationError } from '../../domain/errors.ts';
import { isRecord, refuseUnknownFields, requireObject, requireOneOf } from '../../domain/json.ts';
import {
  type Currency,
  formatAmount,
  parseAmount,
  requireCurrency,
  singleAmountMinorMax,
} from '../../domain/money.ts';
import type { FeeDecision } from '../../domain/transferRecord.ts';
import { RAILS, railBounds } from '../../domain/transfers.ts';

export const FEE_RULE_TYPES = ['fixed', 'percentage', 'tiered'] as const;

/** What a rule prices besides the transfer rails: converting between a fiat wallet and a stablecoin wallet. */
export const FEE_CONVERSION_RAIL = 'conversion';
/** Every `rail` a rule may name: the transfer rails, and conversions. */
export const FEE_RAILS = [...RAILS, FEE_CONVERSION_RAIL] as const;
export type FeeRail = (typeof FEE_RAILS)[number];
export type FeeRuleType = (typeof FEE_RULE_TYPES)[number];

/** Basis points in a whole: 10,000 bp = 100 %. */
export const BASIS_POINTS_PER_WHOLE = 10_000n;
/** Half a whole in basis points: what round half up adds before the division. */
const HALF_WHOLE_BASIS_POINTS = BASIS_POINTS_PER_WHOLE / 2n;
/** The largest percentage a rule may charge: 100 % of the amount (10,000 bp). */
export const FEE_PERCENT_BPS_MAX = 10_000;
/**
 * Rules one schedule version holds at most. One rule per rail and currency the rail carries is 43 today, and
 * one per currency for conversions 18 more, so this leaves room for rails and currencies to come.
 */
export const FEE_SCHEDULE_RULES_MAX = 100;
/** Amount bands one tiered rule holds at most. */
export const FEE_TIERS_MAX = 20;
export const FEE_RULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** One amount band: amounts up to and including `upToMinor` (null: no upper bound, the last band). */
export interface FeeTier {
  upToMinor: bigint | null;
  fixedMinor: bigint;
  bps: number;
}

export type FeeCharge =
  | { type: 'fixed'; fixedMinor: bigint }
  | { type: 'percentage'; bps: number; minMinor: bigint | null; maxMinor: bigint | null }
  | { type: 'tiered'; tiers: FeeTier[] };

export interface FeeRule {
  id: string;
  rail: FeeRail;
  currency: Currency;
  charge: FeeCharge;
}

export interface FeeSchedule {
  organizationId: string;
  version: number;
  rules: FeeRule[];
  createdBy: string;
  createdAt: Date;
}

/** The facts a fee depends on. */
export interface FeeFacts {
  rail: FeeRail;
  currency: Currency;
  amountMinor: bigint;
}

/** amount × bps / 10,000, rounded half up to the minor unit. Both are non-negative, so `/` is floor here. */
export function percentageOf(amountMinor: bigint, bps: number): bigint {
  if (amountMinor < 0n || bps < 0) throw new RangeError('fees are computed on non-negative values only');
  return (amountMinor * BigInt(bps) + HALF_WHOLE_BASIS_POINTS) / BASIS_POINTS_PER_WHOLE;
}

/** The band an amount falls in: the first whose upper bound it does not pass (the last band is open). */
export function tierOf(tiers: readonly FeeTier[], amountMinor: bigint): FeeTier {
  for (const tier of tiers) {
    if (tier.upToMinor === null || amountMinor <= tier.upToMinor) return tier;
  }
  throw new Error('a tiered fee rule ends with an open band');
}

/** The fee one charge takes from an amount. */
export function chargeFor(charge: FeeCharge, amountMinor: bigint): bigint {
  switch (charge.type) {
    case 'fixed':
      return charge.fixedMinor;
    case 'percentage': {
      let fee = percentageOf(amountMinor, charge.bps);
      if (charge.minMinor !== null && fee < charge.minMinor) fee = charge.minMinor;
      if (charge.maxMinor !== null && fee > charge.maxMinor) fee = charge.maxMinor;
      return fee;
    }
    case 'tiered': {
      const tier = tierOf(charge.tiers, amountMinor);
      return tier.fixedMinor + percentageOf(amountMinor, tier.bps);
    }
  }
}

const ruleKey = (rail: string, currency: string) => `${rail}\u0000${currency}`;

/** Each version's rules by (rail, currency), built once per rules list (a cached schedule is decided many times). */
const indexes = new WeakMap<readonly FeeRule[], Map<string, FeeRule>>();

function indexOf(rules: readonly FeeRule[]): Map<string, FeeRule> {
  let index = indexes.get(rules);
  if (!index) {
    index = new Map(rules.map((r) => [ruleKey(r.rail, r.currency), r]));
    indexes.set(rules, index);
  }
  return index;
}

/** The schedule's decision on a transfer: its rule for the rail and currency, else no fee. */
export function decideFee(schedule: Pick<FeeSchedule, 'version' | 'rules'>, facts: FeeFacts): FeeDecision {
  const rule = indexOf(schedule.rules).get(ruleKey(facts.rail, facts.currency));
  if (!rule) return { feeMinor: 0n, scheduleVersion: schedule.version, rule: null };
  return {
    feeMinor: chargeFor(rule.charge, facts.amountMinor),
    scheduleVersion: schedule.version,
    rule: rule.id,
  };
}

/** The schedule every organization has before it writes one: no rules, no fees. */
export function initialFeeSchedule(organizationId: string, now: Date): FeeSchedule {
  return { organizationId, version: 1, rules: [], createdBy: 'system', createdAt: now };
}

// ---- parsing the wire (and stored) form ----

type Raw = Record<string, unknown>;

const TYPE_FIELDS: Record<FeeRuleType, readonly string[]> = {
  fixed: ['fixed'],
  percentage: ['percent_bps', 'min', 'max'],
  tiered: ['tiers'],
};
const COMMON_FIELDS = ['id', 'rail', 'currency', 'type'];

/** A fee amount: a decimal at the currency's exponent, zero allowed, at most the currency's single-amount cap. */
function feeAmount(raw: unknown, currency: Currency, param: string): bigint {
  if (typeof raw !== 'string') {
    throw validationError(param, `${param} must be a decimal string such as "10.00"`, 'invalid_type');
  }
  const minor = parseAmount(raw, currency, param);
  const max = singleAmountMinorMax(currency);
  if (minor > max) {
    throw validationError(
      param,
      `${param} must be at most ${formatAmount(max, currency)} ${currency}`,
      'out_of_range',
    );
  }
  return minor;
}

function basisPoints(raw: unknown, param: string): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw > FEE_PERCENT_BPS_MAX) {
    throw validationError(
      param,
      `${param} must be a whole number of basis points from 0 to ${FEE_PERCENT_BPS_MAX} (100 %)`,
      'out_of_range',
    );
  }
  return raw;
}

function parseTiers(raw: unknown, currency: Currency, param: string): FeeTier[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > FEE_TIERS_MAX) {
    throw validationError(param, `${param} must be a list of 1 to ${FEE_TIERS_MAX} bands`, 'invalid_type');
  }
  let previous: bigint | null = null;
  return raw.map((entry, i) => {
    const at = `${param}.${i}`;
    if (!isRecord(entry))
      throw validationError(at, `${at} must be an object {up_to, fixed, percent_bps}`, 'invalid_type');
    refuseUnknownFields(entry, ['up_to', 'fixed', 'percent_bps'], at);
    const last = i === raw.length - 1;
    let upToMinor: bigint | null = null;
    if (entry.up_to !== undefined && entry.up_to !== null) {
      if (last) {
        throw validationError(
          `${at}.up_to`,
          `the last band of ${param} has no up_to: it takes every larger amount`,
          'unexpected',
        );
      }
      upToMinor = feeAmount(entry.up_to, currency, `${at}.up_to`);
      if (upToMinor <= (previous ?? 0n)) {
        throw validationError(
          `${at}.up_to`,
          `${at}.up_to must be above ${previous === null ? 'zero' : `the band before (${formatAmount(previous, currency)})`}`,
          'out_of_range',
        );
      }
      previous = upToMinor;
    } else if (!last) {
      throw validationError(`${at}.up_to`, `${at}.up_to is required on every band but the last`, 'missing');
    }
    if (entry.fixed === undefined && entry.percent_bps === undefined) {
      throw validationError(at, `${at} needs fixed, percent_bps or both`, 'missing');
    }
    return {
      upToMinor,
      fixedMinor: entry.fixed === undefined ? 0n : feeAmount(entry.fixed, currency, `${at}.fixed`),
      bps: entry.percent_bps === undefined ? 0 : basisPoints(entry.percent_bps, `${at}.percent_bps`),
    };
  });
}

function parseCharge(raw: Raw, type: FeeRuleType, currency: Currency, param: string): FeeCharge {
  for (const key of Object.keys(raw)) {
    if (!COMMON_FIELDS.includes(key) && !TYPE_FIELDS[type].includes(key)) {
      const known = (Object.keys(TYPE_FIELDS) as FeeRuleType[]).some((t) => TYPE_FIELDS[t].includes(key));
      throw validationError(
        `${param}.${key}`,
        known
          ? `${param}.${key} does not go with a ${type} rule (it takes ${TYPE_FIELDS[type].join(', ')})`
          : `${param}.${key} is not a field of a fee rule`,
        known ? 'unexpected' : 'unknown_field',
      );
    }
  }
  switch (type) {
    case 'fixed':
      if (raw.fixed === undefined)
        throw validationError(`${param}.fixed`, `${param}.fixed is required`, 'missing');
      return { type, fixedMinor: feeAmount(raw.fixed, currency, `${param}.fixed`) };
    case 'percentage': {
      if (raw.percent_bps === undefined) {
        throw validationError(`${param}.percent_bps`, `${param}.percent_bps is required`, 'missing');
      }
      const bps = basisPoints(raw.percent_bps, `${param}.percent_bps`);
      const minMinor =
        raw.min === undefined || raw.min === null ? null : feeAmount(raw.min, currency, `${param}.min`);
      const maxMinor =
        raw.max === undefined || raw.max === null ? null : feeAmount(raw.max, currency, `${param}.max`);
      if (minMinor !== null && maxMinor !== null && maxMinor < minMinor) {
        throw validationError(`${param}.max`, `${param}.max must be at least ${param}.min`, 'out_of_range');
      }
      return { type, bps, minMinor, maxMinor };
    }
    case 'tiered':
      if (raw.tiers === undefined)
        throw validationError(`${param}.tiers`, `${param}.tiers is required`, 'missing');
      return { type, tiers: parseTiers(raw.tiers, currency, `${param}.tiers`) };
  }
}

function parseRule(given: unknown, param: string, stored: boolean): FeeRule {
  const raw = requireObject(given, param);
  if (typeof raw.id !== 'string' || !FEE_RULE_ID_PATTERN.test(raw.id)) {
    throw validationError(
      `${param}.id`,
      `${param}.id must be 1-64 lower-case letters, digits, '_' or '-'`,
      raw.id === undefined ? 'missing' : 'invalid_format',
    );
  }
  const rail: FeeRail = requireOneOf(raw.rail, FEE_RAILS, `${param}.rail`);
  const currency = requireCurrency(raw.currency, `${param}.currency`);
  // A stored version stays readable if the rails' table changes later: such a rule then never applies. A
  // conversion may start from any supported currency (fiat to a stablecoin, or a stablecoin back).
  if (!stored && rail !== FEE_CONVERSION_RAIL && !railBounds(rail, currency)) {
    throw validationError(
      `${param}.currency`,
      `the ${rail} rail does not carry ${currency}`,
      'unsupported_by_rail',
    );
  }
  const type = requireOneOf(raw.type, FEE_RULE_TYPES, `${param}.type`);
  return { id: raw.id, rail, currency, charge: parseCharge(raw, type, currency, param) };
}

/**
 * A schedule's rules as sent (`rules`), checked field by field; the first fault is a 400 naming it. `stored`:
 * read back from the database, where the bounds that may change with the code (the rule count, what each
 * rail carries) are not checked again, so a stored version never becomes unreadable.
 */
export function parseFeeRules(raw: unknown, options: { stored?: boolean } = {}): FeeRule[] {
  const stored = options.stored === true;
  if (!Array.isArray(raw) || (!stored && raw.length > FEE_SCHEDULE_RULES_MAX)) {
    throw validationError(
      'rules',
      `rules must be a list of at most ${FEE_SCHEDULE_RULES_MAX} fee rules`,
      'invalid_type',
    );
  }
  const rules = raw.map((entry, i) => parseRule(entry, `rules.${i}`, stored));
  const ids = new Set<string>();
  const pairs = new Set<string>();
  rules.forEach((rule, i) => {
    if (ids.has(rule.id))
      throw validationError(`rules.${i}.id`, `rule id '${rule.id}' appears twice`, 'duplicate');
    ids.add(rule.id);
    const key = ruleKey(rule.rail, rule.currency);
    if (pairs.has(key)) {
      throw validationError(
        `rules.${i}.currency`,
        `there is already a rule for ${rule.rail} in ${rule.currency}: one rule per rail and currency`,
        'duplicate',
      );
    }
    pairs.add(key);
  });
  return rules;
}

// ---- the stored and wire form (the same JSON) ----

function tierJson(tier: FeeTier, currency: Currency): Record<string, unknown> {
  return {
    ...(tier.upToMinor === null ? {} : { up_to: formatAmount(tier.upToMinor, currency) }),
    fixed: formatAmount(tier.fixedMinor, currency),
    percent_bps: tier.bps,
  };
}

/** A rule as the API shows it and the database stores it. */
export function feeRuleJson(rule: FeeRule): Record<string, unknown> {
  const money = (minor: bigint) => formatAmount(minor, rule.currency);
  const base = { id: rule.id, rail: rule.rail, currency: rule.currency, type: rule.charge.type };
  switch (rule.charge.type) {
    case 'fixed':
      return { ...base, fixed: money(rule.charge.fixedMinor) };
    case 'percentage':
      return {
        ...base,
        percent_bps: rule.charge.bps,
        min: rule.charge.minMinor === null ? null : money(rule.charge.minMinor),
        max: rule.charge.maxMinor === null ? null : money(rule.charge.maxMinor),
      };
    case 'tiered':
      return { ...base, tiers: rule.charge.tiers.map((t) => tierJson(t, rule.currency)) };
  }
}

/** Rules as stored: written by feeRuleJson, so they parse again exactly. */
export function feeRulesFromStored(raw: unknown): FeeRule[] {
  return parseFeeRules(raw, { stored: true });
}
