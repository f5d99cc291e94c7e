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
import { type Currency, formatAmount } from '../money.ts';

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

/** What a rule that fired observed; the rule's own fields are added by evaluateAmlRules. */
type AmlVerdict = Omit<AmlHit, 'ruleId' | 'ruleType' | 'ruleVersion' | 'ruleName' | 'action'>;

/** Minor units as a decimal string in the transfer's currency, for reasons and observations. */
function moneyOf(facts: AmlTransferFacts): (minor: bigint) => string {
  return (minor) => formatAmount(minor, facts.currency);
}

/** The rule's verdict on the transfer: a hit, or undefined. */
function evaluate(rule: AmlRule, facts: AmlTransferFacts): AmlVerdict | undefined {
  const p = rule.parameters;
  switch (p.type) {
    case 'single_transfer_threshold':
      return singleTransferVerdict(p, facts);
    case 'velocity':
      return velocityVerdict(p, facts);
    case 'structuring':
      return structuringVerdict(p, facts);
    case 'rapid_movement':
      return rapidMovementVerdict(p, facts);
    case 'new_counterparty_high_value':
      return newCounterpartyVerdict(p, facts);
  }
}

function singleTransferVerdict(
  p: Extract<AmlRuleParameters, { type: 'single_transfer_threshold' }>,
  facts: AmlTransferFacts,
): AmlVerdict | undefined {
  const money = moneyOf(facts);
  if (facts.amountMinor < p.amountMinor) return undefined;
  return {
    reason: `a single transfer of ${money(facts.amountMinor)} ${facts.currency}, at or above ${money(p.amountMinor)}`,
    observed: { amount: money(facts.amountMinor), threshold: money(p.amountMinor) },
  };
}

function velocityVerdict(
  p: Extract<AmlRuleParameters, { type: 'velocity' }>,
  facts: AmlTransferFacts,
): AmlVerdict | undefined {
  const money = moneyOf(facts);
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

function structuringVerdict(
  p: Extract<AmlRuleParameters, { type: 'structuring' }>,
  facts: AmlTransferFacts,
): AmlVerdict | undefined {
  const money = moneyOf(facts);
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

function rapidMovementVerdict(
  p: Extract<AmlRuleParameters, { type: 'rapid_movement' }>,
  facts: AmlTransferFacts,
): AmlVerdict | undefined {
  const money = moneyOf(facts);
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

function newCounterpartyVerdict(
  p: Extract<AmlRuleParameters, { type: 'new_counterparty_high_value' }>,
  facts: AmlTransferFacts,
): AmlVerdict | undefined {
  const money = moneyOf(facts);
  if (facts.counterpartyKnown || facts.amountMinor < p.amountMinor) return undefined;
  return {
    reason: `${money(facts.amountMinor)} ${facts.currency} to a counterparty this wallet never paid before`,
    observed: { amount: money(facts.amountMinor), threshold: money(p.amountMinor) },
  };
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
