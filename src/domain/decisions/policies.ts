/**
 * Authorization policies, pure: an organization's ordered rules and a default, held as data and versioned
 * as a whole. A rule matches on facts about an operation (a transfer's amount, rail, destination, customer,
 * source wallet, counterparty and recent activity; or a policy change) and decides `allow`, `deny` or
 * `require_approval` with a quorum. First match wins; the default applies to a transfer no rule matches,
 * and a policy change that no rule names is allowed.
 */
import type { KycStatus } from '../customers.ts';
import { KYC_STATUSES } from '../customers.ts';
import { validationError } from '../errors.ts';
import {
  DEFAULT_CHANGE_RULE_ID,
  DEFAULT_GOVERNED_KINDS,
  GOVERNED_CHANGE_KINDS,
  type GovernedChangeKind,
} from '../governedChanges.ts';
import { isId } from '../ids.ts';
import { MEMBER_ROLES, type MemberRole } from '../members.ts';
import { type Currency, formatAmount, isCurrency, parseAmount } from '../money.ts';
import { RISK_LEVELS, type RiskLevel } from '../risk.ts';
import { DESTINATION_TYPES, type DestinationType, RAILS, type Rail } from '../transfers.ts';

export const POLICY_ACTIONS = ['allow', 'deny', 'require_approval'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/**
 * What a rule governs: new transfers, payment batches as a whole, changes to the policy itself, loan
 * applications, or governed changes (`change`: role grants, elevated keys, rates… matched by `kinds`).
 */
export const POLICY_OPERATIONS = ['transfer', 'payment_batch', 'policy.update', 'loan', 'change'] as const;
export type PolicyOperation = (typeof POLICY_OPERATIONS)[number];

/** Rules one policy version holds at most. */
export const POLICY_RULES_MAX = 100;
/** Entries in one list matcher (rails, wallets, amount ranges…) at most. */
export const POLICY_MATCH_VALUES_MAX = 100;
export const POLICY_RULE_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const POLICY_DESCRIPTION_CHARS_MAX = 500;
/** Votes an approval may need at most. */
export const APPROVAL_QUORUM_MAX = 10;
/** How long an approval waits when its rule names no expiry: 24 hours. */
export const APPROVAL_EXPIRES_IN_SECONDS_DEFAULT = 24 * 3_600;
export const APPROVAL_EXPIRES_IN_SECONDS_MIN = 60;
/** The longest an approval may wait: 30 days. */
export const APPROVAL_EXPIRES_IN_SECONDS_MAX = 30 * 24 * 3_600;
/** The longest window an aggregate may look back over: 30 days (the AML monitor's limit). */
export const POLICY_WINDOW_SECONDS_MAX = 30 * 24 * 3_600;
/** The default rule's name in decisions. */
export const DEFAULT_RULE_ID = 'default';

export interface ApprovalRequirement {
  quorum: number;
  roles: MemberRole[];
  /** The approving votes must come from at least two distinct roles. */
  distinctRoles: boolean;
  expiresInSeconds: number;
}

export interface AmountRange {
  currency: Currency;
  /** Inclusive lower bound in minor units. */
  gteMinor: bigint | null;
  /** Exclusive upper bound in minor units. */
  ltMinor: bigint | null;
}

export interface AggregateMatch {
  windowSeconds: number;
  /** Matches when the source wallet's outgoing transfers in the window, this one included, reach either. */
  countAtLeast: number | null;
  sumAtLeast: { currency: Currency; amountMinor: bigint } | null;
}

export interface PolicyMatch {
  amount?: AmountRange[];
  rails?: Rail[];
  destinationTypes?: DestinationType[];
  riskLevels?: RiskLevel[];
  kycStatuses?: KycStatus[];
  sourceWallets?: string[];
  counterparty?: 'new' | 'known';
  aggregate?: AggregateMatch;
  /** A `change` rule's kinds of change; absent, it matches every kind. */
  kinds?: GovernedChangeKind[];
}

export interface PolicyRule {
  id: string;
  description: string | null;
  appliesTo: PolicyOperation;
  match: PolicyMatch;
  action: PolicyAction;
  approval: ApprovalRequirement | null;
}

export interface DefaultPolicyRule {
  action: PolicyAction;
  approval: ApprovalRequirement | null;
}

export interface Policy {
  organizationId: string;
  version: number;
  rules: PolicyRule[];
  defaultRule: DefaultPolicyRule;
  createdBy: string;
  approvalId: string | null;
  createdAt: Date;
}

/** The policy an organization has before it writes one: every transfer allowed, changes by any admin. */
export const INITIAL_DEFAULT_RULE: DefaultPolicyRule = { action: 'allow', approval: null };

/**
 * The rule pilot and production organizations start with: a role grant, an elevated key, a policy change
 * or a conversion rate waits for one other `admin`'s approval. The sandbox starts without it.
 */
export const DEFAULT_CHANGE_RULE: PolicyRule = {
  id: DEFAULT_CHANGE_RULE_ID,
  description: 'Sensitive changes need a second admin (the default of pilot and production).',
  appliesTo: 'change',
  match: { kinds: [...DEFAULT_GOVERNED_KINDS] },
  action: 'require_approval',
  approval: {
    quorum: 1,
    roles: ['admin'],
    distinctRoles: false,
    expiresInSeconds: APPROVAL_EXPIRES_IN_SECONDS_DEFAULT,
  },
};

/** Facts about a new transfer, as the ledger writer knows them with the source wallet locked. */
export interface TransferFacts {
  amountMinor: bigint;
  currency: Currency;
  rail: Rail;
  destinationType: DestinationType;
  sourceWalletId: string;
  /** Absent when no rule of the policy needs the customer (it is then not read). */
  riskLevel?: RiskLevel | undefined;
  kycStatus?: KycStatus | undefined;
  /** Whether the source wallet paid this counterparty before; absent when not looked up. */
  counterpartyKnown?: boolean | undefined;
  /** The source wallet's outgoing transfers within the last `windowSeconds`, before this one. */
  outgoingWithin?: ((windowSeconds: number) => { count: number; sumMinor: bigint }) | undefined;
}

/** A payment batch as a whole: its total and paying wallet (its `payment_batch` rules match only these). */
export interface BatchFacts {
  totalMinor: bigint;
  currency: TransferFacts['currency'];
  sourceWalletId: string;
}

/** A loan application: its principal, the borrower's wallet, and the borrower's standing when a rule names it. */
export interface LoanFacts {
  principalMinor: bigint;
  currency: TransferFacts['currency'];
  walletId: string;
  riskLevel?: RiskLevel | undefined;
  kycStatus?: KycStatus | undefined;
}

export type PolicySubject =
  | { operation: 'transfer'; facts: TransferFacts }
  | { operation: 'payment_batch'; facts: BatchFacts }
  | { operation: 'policy.update' }
  | { operation: 'loan'; facts: LoanFacts }
  | { operation: 'change'; kind: GovernedChangeKind };

/** The matchers a `payment_batch` rule may use. */
export const PAYMENT_BATCH_MATCHERS = ['amount', 'source_wallets'] as const;
/** The matchers a `loan` rule may use: the principal, the borrower's wallet, risk level and KYC status. */
export const LOAN_MATCHERS = ['amount', 'source_wallets', 'risk_levels', 'kyc_statuses'] as const;

export interface PolicyDecision {
  decision: PolicyAction;
  policyVersion: number;
  /** The rule that decided, or `default`. */
  rule: string;
  approval: ApprovalRequirement | null;
  /** Why the rule matched, for the evidence. */
  matched: Record<string, string | number | boolean>;
}

function matchTransfer(
  match: PolicyMatch,
  facts: TransferFacts,
): Record<string, string | number | boolean> | null {
  const why: Record<string, string | number | boolean> = {};
  if (match.amount) {
    const range = match.amount.find((r) => r.currency === facts.currency);
    if (!range) return null;
    if (range.gteMinor !== null && facts.amountMinor < range.gteMinor) return null;
    if (range.ltMinor !== null && facts.amountMinor >= range.ltMinor) return null;
    why.amount = formatAmount(facts.amountMinor, facts.currency);
  }
  if (match.rails && !match.rails.includes(facts.rail)) return null;
  if (match.destinationTypes && !match.destinationTypes.includes(facts.destinationType)) return null;
  if (match.sourceWallets && !match.sourceWallets.includes(facts.sourceWalletId)) return null;
  if (match.riskLevels) {
    if (facts.riskLevel === undefined || !match.riskLevels.includes(facts.riskLevel)) return null;
    why.risk_level = facts.riskLevel;
  }
  if (match.kycStatuses) {
    if (facts.kycStatus === undefined || !match.kycStatuses.includes(facts.kycStatus)) return null;
    why.kyc_status = facts.kycStatus;
  }
  if (match.counterparty) {
    if (facts.counterpartyKnown === undefined) return null;
    if ((match.counterparty === 'known') !== facts.counterpartyKnown) return null;
    why.counterparty = match.counterparty;
  }
  if (match.aggregate) {
    const a = match.aggregate;
    if (a.sumAtLeast && a.sumAtLeast.currency !== facts.currency) return null;
    const before = facts.outgoingWithin?.(a.windowSeconds) ?? { count: 0, sumMinor: 0n };
    const count = before.count + 1;
    const sum = before.sumMinor + facts.amountMinor;
    const byCount = a.countAtLeast !== null && count >= a.countAtLeast;
    const bySum = a.sumAtLeast !== null && sum >= a.sumAtLeast.amountMinor;
    if (!byCount && !bySum) return null;
    why.window_count = count;
    why.window_sum = formatAmount(sum, facts.currency);
  }
  return why;
}

/** The policy's decision on an operation: the first rule for it that matches, else the default. */
export function evaluatePolicy(policy: Policy, subject: PolicySubject): PolicyDecision {
  for (const rule of policy.rules) {
    if (rule.appliesTo !== subject.operation) continue;
    const matched =
      subject.operation === 'transfer'
        ? matchTransfer(rule.match, subject.facts)
        : subject.operation === 'payment_batch'
          ? matchTransfer(rule.match, {
              amountMinor: subject.facts.totalMinor,
              currency: subject.facts.currency,
              rail: 'internal',
              destinationType: 'wallet',
              sourceWalletId: subject.facts.sourceWalletId,
            })
          : subject.operation === 'change'
            ? rule.match.kinds === undefined || rule.match.kinds.includes(subject.kind)
              ? { kind: subject.kind }
              : null
            : subject.operation === 'loan'
              ? matchTransfer(rule.match, {
                  amountMinor: subject.facts.principalMinor,
                  currency: subject.facts.currency,
                  rail: 'internal',
                  destinationType: 'wallet',
                  sourceWalletId: subject.facts.walletId,
                  riskLevel: subject.facts.riskLevel,
                  kycStatus: subject.facts.kycStatus,
                })
              : {};
    if (matched === null) continue;
    return {
      decision: rule.action,
      policyVersion: policy.version,
      rule: rule.id,
      approval: rule.approval,
      matched,
    };
  }
  if (subject.operation !== 'transfer') {
    return {
      decision: 'allow',
      policyVersion: policy.version,
      rule: DEFAULT_RULE_ID,
      approval: null,
      matched: {},
    };
  }
  return {
    decision: policy.defaultRule.action,
    policyVersion: policy.version,
    rule: DEFAULT_RULE_ID,
    approval: policy.defaultRule.approval,
    matched: {},
  };
}

const DECISION_SEVERITY: Record<PolicyAction, number> = { allow: 0, require_approval: 1, deny: 2 };

/**
 * A payment batch is authorized as a whole: by the first `payment_batch` rule that matches its total and
 * wallet, else by the strictest decision its items get from the transfer rules (deny over approval over
 * allow; the first item with that decision names the rule), so a batch never slips past a rule its items
 * would meet one by one.
 */
export function decideBatchAuthorization(
  policy: Policy,
  batch: BatchFacts,
  items: readonly TransferFacts[],
): PolicyDecision {
  const byBatchRule = evaluatePolicy(policy, { operation: 'payment_batch', facts: batch });
  if (byBatchRule.rule !== DEFAULT_RULE_ID) return byBatchRule;
  let strictest: PolicyDecision | undefined;
  for (const facts of items) {
    const decision = evaluatePolicy(policy, { operation: 'transfer', facts });
    if (!strictest || DECISION_SEVERITY[decision.decision] > DECISION_SEVERITY[strictest.decision]) {
      strictest = decision;
      if (decision.decision === 'deny') break;
    }
  }
  return strictest ?? byBatchRule;
}

/** What the ledger writer must look up for this policy's transfer rules. */
export function policyNeeds(policy: Policy): {
  customer: boolean;
  activityWindowSeconds: number;
  /** The windows the aggregate matchers count the paying wallet's transfers over. */
  aggregateWindowsSeconds: Set<number>;
} {
  let customer = false;
  let activityWindowSeconds = 0;
  const aggregateWindowsSeconds = new Set<number>();
  for (const rule of policy.rules) {
    if (rule.appliesTo !== 'transfer') continue;
    if (rule.match.riskLevels || rule.match.kycStatuses) customer = true;
    // A counterparty look-up goes with an activity read; a one-second window asks for just that.
    if (rule.match.counterparty) activityWindowSeconds = Math.max(activityWindowSeconds, 1);
    if (rule.match.aggregate) {
      activityWindowSeconds = Math.max(activityWindowSeconds, rule.match.aggregate.windowSeconds);
      aggregateWindowsSeconds.add(rule.match.aggregate.windowSeconds);
    }
  }
  return { customer, activityWindowSeconds, aggregateWindowsSeconds };
}

// ---- parsing the wire (and stored) form ----

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuseUnknown(raw: Raw, known: readonly string[], param: string): void {
  for (const key of Object.keys(raw)) {
    if (!known.includes(key)) {
      throw validationError(`${param}.${key}`, `${param}.${key} is not a field of ${param}`, 'unknown_field');
    }
  }
}

function list<T extends string>(
  raw: unknown,
  param: string,
  allowed: readonly T[] | ((value: string) => boolean),
  noun: string,
): T[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > POLICY_MATCH_VALUES_MAX) {
    throw validationError(
      param,
      `${param} must be a list of 1 to ${POLICY_MATCH_VALUES_MAX} ${noun}`,
      'invalid_type',
    );
  }
  const check =
    typeof allowed === 'function' ? allowed : (v: string) => (allowed as readonly string[]).includes(v);
  raw.forEach((value, i) => {
    if (typeof value !== 'string' || !check(value)) {
      const hint = typeof allowed === 'function' ? '' : ` (one of ${allowed.join(', ')})`;
      throw validationError(`${param}.${i}`, `${param}.${i} is not a valid ${noun}${hint}`, 'invalid_value');
    }
  });
  return [...new Set(raw as T[])];
}

function positiveInteger(raw: unknown, param: string, min: number, max: number): number {
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) {
    throw validationError(param, `${param} must be a whole number from ${min} to ${max}`, 'out_of_range');
  }
  return raw;
}

function currencyOf(raw: unknown, param: string): Currency {
  if (typeof raw !== 'string' || !isCurrency(raw)) {
    throw validationError(param, `${param} must be a supported ISO 4217 currency code`, 'invalid_value');
  }
  return raw;
}

function parseAmountRanges(raw: unknown, param: string): AmountRange[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > POLICY_MATCH_VALUES_MAX) {
    throw validationError(
      param,
      `${param} must be a list of amount ranges, one per currency`,
      'invalid_type',
    );
  }
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const at = `${param}.${i}`;
    if (!isObject(entry))
      throw validationError(at, `${at} must be an object {currency, gte, lt}`, 'invalid_type');
    refuseUnknown(entry, ['currency', 'gte', 'lt'], at);
    const currency = currencyOf(entry.currency, `${at}.currency`);
    if (seen.has(currency))
      throw validationError(`${at}.currency`, `${currency} has two ranges`, 'duplicate');
    seen.add(currency);
    const gteMinor =
      entry.gte === undefined || entry.gte === null ? null : parseAmount(entry.gte, currency, `${at}.gte`);
    const ltMinor =
      entry.lt === undefined || entry.lt === null ? null : parseAmount(entry.lt, currency, `${at}.lt`);
    if (gteMinor === null && ltMinor === null) {
      throw validationError(at, `${at} needs gte, lt or both`, 'missing');
    }
    if (gteMinor !== null && ltMinor !== null && ltMinor <= gteMinor) {
      throw validationError(`${at}.lt`, `${at}.lt must be above ${at}.gte`, 'out_of_range');
    }
    return { currency, gteMinor, ltMinor };
  });
}

function parseAggregate(raw: unknown, param: string): AggregateMatch {
  if (!isObject(raw)) throw validationError(param, `${param} must be an object`, 'invalid_type');
  refuseUnknown(raw, ['window_seconds', 'count_at_least', 'sum_at_least', 'currency'], param);
  const windowSeconds = positiveInteger(
    raw.window_seconds,
    `${param}.window_seconds`,
    1,
    POLICY_WINDOW_SECONDS_MAX,
  );
  const countAtLeast =
    raw.count_at_least === undefined
      ? null
      : positiveInteger(raw.count_at_least, `${param}.count_at_least`, 1, 1_000_000);
  let sumAtLeast: AggregateMatch['sumAtLeast'] = null;
  if (raw.sum_at_least !== undefined) {
    const currency = currencyOf(raw.currency, `${param}.currency`);
    sumAtLeast = { currency, amountMinor: parseAmount(raw.sum_at_least, currency, `${param}.sum_at_least`) };
  } else if (raw.currency !== undefined) {
    throw validationError(`${param}.currency`, `${param}.currency goes with sum_at_least`, 'unexpected');
  }
  if (countAtLeast === null && sumAtLeast === null) {
    throw validationError(param, `${param} needs count_at_least, sum_at_least or both`, 'missing');
  }
  return { windowSeconds, countAtLeast, sumAtLeast };
}

function parseMatch(raw: unknown, param: string): PolicyMatch {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw validationError(param, `${param} must be an object`, 'invalid_type');
  refuseUnknown(
    raw,
    [
      'amount',
      'rails',
      'destination_types',
      'risk_levels',
      'kyc_statuses',
      'source_wallets',
      'counterparty',
      'aggregate',
      'kinds',
    ],
    param,
  );
  const match: PolicyMatch = {};
  if (raw.amount !== undefined) match.amount = parseAmountRanges(raw.amount, `${param}.amount`);
  if (raw.rails !== undefined) match.rails = list(raw.rails, `${param}.rails`, RAILS, 'rail');
  if (raw.destination_types !== undefined) {
    match.destinationTypes = list(
      raw.destination_types,
      `${param}.destination_types`,
      DESTINATION_TYPES,
      'destination type',
    );
  }
  if (raw.risk_levels !== undefined)
    match.riskLevels = list(raw.risk_levels, `${param}.risk_levels`, RISK_LEVELS, 'risk level');
  if (raw.kyc_statuses !== undefined) {
    match.kycStatuses = list(raw.kyc_statuses, `${param}.kyc_statuses`, KYC_STATUSES, 'KYC status');
  }
  if (raw.source_wallets !== undefined) {
    match.sourceWallets = list(
      raw.source_wallets,
      `${param}.source_wallets`,
      (v) => isId('wallet', v),
      'wallet id',
    );
  }
  if (raw.counterparty !== undefined) {
    if (raw.counterparty !== 'new' && raw.counterparty !== 'known') {
      throw validationError(
        `${param}.counterparty`,
        `${param}.counterparty must be 'new' or 'known'`,
        'invalid_value',
      );
    }
    match.counterparty = raw.counterparty;
  }
  if (raw.aggregate !== undefined) match.aggregate = parseAggregate(raw.aggregate, `${param}.aggregate`);
  if (raw.kinds !== undefined) {
    match.kinds = list(raw.kinds, `${param}.kinds`, GOVERNED_CHANGE_KINDS, 'kind of change');
  }
  return match;
}

function parseApproval(raw: unknown, param: string): ApprovalRequirement {
  if (!isObject(raw)) {
    throw validationError(param, `${param} is required for require_approval: {quorum, roles}`, 'missing');
  }
  refuseUnknown(raw, ['quorum', 'roles', 'distinct_roles', 'expires_in_seconds'], param);
  const quorum = positiveInteger(raw.quorum, `${param}.quorum`, 1, APPROVAL_QUORUM_MAX);
  const roles = list(raw.roles, `${param}.roles`, MEMBER_ROLES, 'role');
  if (raw.distinct_roles !== undefined && typeof raw.distinct_roles !== 'boolean') {
    throw validationError(
      `${param}.distinct_roles`,
      `${param}.distinct_roles must be true or false`,
      'invalid_type',
    );
  }
  const distinctRoles = raw.distinct_roles === true;
  if (distinctRoles && (quorum < 2 || roles.length < 2)) {
    throw validationError(
      `${param}.distinct_roles`,
      `${param}.distinct_roles needs a quorum of at least 2 and at least two roles`,
      'unsatisfiable',
    );
  }
  const expiresInSeconds =
    raw.expires_in_seconds === undefined
      ? APPROVAL_EXPIRES_IN_SECONDS_DEFAULT
      : positiveInteger(
          raw.expires_in_seconds,
          `${param}.expires_in_seconds`,
          APPROVAL_EXPIRES_IN_SECONDS_MIN,
          APPROVAL_EXPIRES_IN_SECONDS_MAX,
        );
  return { quorum, roles, distinctRoles, expiresInSeconds };
}

function parseAction(
  raw: Raw,
  param: string,
): { action: PolicyAction; approval: ApprovalRequirement | null } {
  const action = raw.action;
  if (typeof action !== 'string' || !(POLICY_ACTIONS as readonly string[]).includes(action)) {
    throw validationError(
      `${param}.action`,
      `${param}.action must be one of: ${POLICY_ACTIONS.join(', ')}`,
      'invalid_value',
    );
  }
  if (action === 'require_approval') {
    return { action, approval: parseApproval(raw.approval, `${param}.approval`) };
  }
  if (raw.approval !== undefined && raw.approval !== null) {
    throw validationError(
      `${param}.approval`,
      `${param}.approval goes only with require_approval`,
      'unexpected',
    );
  }
  return { action: action as PolicyAction, approval: null };
}

function parseRule(raw: unknown, param: string): PolicyRule {
  if (!isObject(raw)) throw validationError(param, `${param} must be an object`, 'invalid_type');
  refuseUnknown(raw, ['id', 'description', 'applies_to', 'match', 'action', 'approval'], param);
  if (typeof raw.id !== 'string' || !POLICY_RULE_ID_PATTERN.test(raw.id) || raw.id === DEFAULT_RULE_ID) {
    throw validationError(
      `${param}.id`,
      `${param}.id must be 1-64 lower-case letters, digits, '_' or '-', and not '${DEFAULT_RULE_ID}'`,
      'invalid_format',
    );
  }
  if (
    raw.description !== undefined &&
    raw.description !== null &&
    (typeof raw.description !== 'string' || raw.description.length > POLICY_DESCRIPTION_CHARS_MAX)
  ) {
    throw validationError(
      `${param}.description`,
      `${param}.description must be text of at most ${POLICY_DESCRIPTION_CHARS_MAX} characters`,
      'invalid_type',
    );
  }
  const appliesTo = raw.applies_to ?? 'transfer';
  if (typeof appliesTo !== 'string' || !(POLICY_OPERATIONS as readonly string[]).includes(appliesTo)) {
    throw validationError(
      `${param}.applies_to`,
      `${param}.applies_to must be one of: ${POLICY_OPERATIONS.join(', ')}`,
      'invalid_value',
    );
  }
  const match = parseMatch(raw.match, `${param}.match`);
  const outsideBatch = Object.keys(match).find((k) => !['amount', 'sourceWallets'].includes(k));
  if (appliesTo === 'payment_batch' && outsideBatch !== undefined) {
    throw validationError(
      `${param}.match`,
      `a payment_batch rule matches only ${PAYMENT_BATCH_MATCHERS.join(' and ')} (the batch's total and wallet)`,
      'unexpected',
    );
  }
  const outsideLoan = Object.keys(match).find(
    (k) => !['amount', 'sourceWallets', 'riskLevels', 'kycStatuses'].includes(k),
  );
  if (appliesTo === 'loan' && outsideLoan !== undefined) {
    throw validationError(
      `${param}.match`,
      `a loan rule matches only ${LOAN_MATCHERS.join(', ')} (the principal, the borrower's wallet and standing)`,
      'unexpected',
    );
  }
  const outsideChange = Object.keys(match).find((k) => k !== 'kinds');
  if (appliesTo === 'change' && outsideChange !== undefined) {
    throw validationError(
      `${param}.match`,
      'a change rule matches only kinds (the kinds of change it governs)',
      'unexpected',
    );
  }
  if (appliesTo !== 'change' && match.kinds !== undefined) {
    throw validationError(`${param}.match.kinds`, 'kinds goes only with applies_to: change', 'unexpected');
  }
  if (appliesTo === 'policy.update' && Object.keys(match).length > 0) {
    throw validationError(
      `${param}.match`,
      'a policy.update rule matches every policy change; it takes no match',
      'unexpected',
    );
  }
  const { action, approval } = parseAction(raw, param);
  return {
    id: raw.id,
    description: typeof raw.description === 'string' ? raw.description : null,
    appliesTo: appliesTo as PolicyOperation,
    match,
    action,
    approval,
  };
}

/** A policy body as sent (`{rules, default}`), checked field by field; the first fault is a 400 naming it. */
export function parsePolicyBody(body: { rules?: unknown; default?: unknown }): {
  rules: PolicyRule[];
  defaultRule: DefaultPolicyRule;
} {
  if (!Array.isArray(body.rules) || body.rules.length > POLICY_RULES_MAX) {
    throw validationError(
      'rules',
      `rules must be a list of at most ${POLICY_RULES_MAX} rules`,
      'invalid_type',
    );
  }
  const rules = body.rules.map((raw, i) => parseRule(raw, `rules.${i}`));
  const ids = new Set<string>();
  rules.forEach((rule, i) => {
    if (ids.has(rule.id))
      throw validationError(`rules.${i}.id`, `rule id '${rule.id}' appears twice`, 'duplicate');
    ids.add(rule.id);
  });
  let defaultRule = INITIAL_DEFAULT_RULE;
  if (body.default !== undefined) {
    if (!isObject(body.default))
      throw validationError('default', 'default must be an object {action, approval}', 'invalid_type');
    refuseUnknown(body.default, ['action', 'approval'], 'default');
    defaultRule = parseAction(body.default, 'default');
  }
  return { rules, defaultRule };
}

// ---- the stored and wire form (the same JSON) ----

function approvalJson(a: ApprovalRequirement | null) {
  return (
    a && {
      quorum: a.quorum,
      roles: a.roles,
      distinct_roles: a.distinctRoles,
      expires_in_seconds: a.expiresInSeconds,
    }
  );
}

function matchJson(m: PolicyMatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (m.amount) {
    out.amount = m.amount.map((r) => ({
      currency: r.currency,
      ...(r.gteMinor === null ? {} : { gte: formatAmount(r.gteMinor, r.currency) }),
      ...(r.ltMinor === null ? {} : { lt: formatAmount(r.ltMinor, r.currency) }),
    }));
  }
  if (m.rails) out.rails = m.rails;
  if (m.destinationTypes) out.destination_types = m.destinationTypes;
  if (m.riskLevels) out.risk_levels = m.riskLevels;
  if (m.kycStatuses) out.kyc_statuses = m.kycStatuses;
  if (m.sourceWallets) out.source_wallets = m.sourceWallets;
  if (m.counterparty) out.counterparty = m.counterparty;
  if (m.kinds) out.kinds = m.kinds;
  if (m.aggregate) {
    const a = m.aggregate;
    out.aggregate = {
      window_seconds: a.windowSeconds,
      ...(a.countAtLeast === null ? {} : { count_at_least: a.countAtLeast }),
      ...(a.sumAtLeast === null
        ? {}
        : {
            currency: a.sumAtLeast.currency,
            sum_at_least: formatAmount(a.sumAtLeast.amountMinor, a.sumAtLeast.currency),
          }),
    };
  }
  return out;
}

export function ruleJson(rule: PolicyRule): Record<string, unknown> {
  return {
    id: rule.id,
    description: rule.description,
    applies_to: rule.appliesTo,
    match: matchJson(rule.match),
    action: rule.action,
    approval: approvalJson(rule.approval),
  };
}

export function defaultRuleJson(rule: DefaultPolicyRule): Record<string, unknown> {
  return { action: rule.action, approval: approvalJson(rule.approval) };
}

/** Reads rules back from their stored JSON (written by ruleJson, so it parses). */
export function rulesFromStored(
  rules: unknown,
  defaultRule: unknown,
): { rules: PolicyRule[]; defaultRule: DefaultPolicyRule } {
  return parsePolicyBody({ rules, default: defaultRule });
}

export function approvalRequirementJson(a: ApprovalRequirement) {
  return approvalJson(a);
}
