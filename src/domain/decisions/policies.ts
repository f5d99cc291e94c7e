/**
 * Authorization policies, pure: an organization's ordered rules and a default, held as data and versioned
 * as a whole. A rule matches on facts about an operation (a transfer's amount, rail, destination, customer,
 * source wallet, counterparty and recent activity; or a policy change) and decides `allow`, `deny` or
 * `require_approval` with a quorum. First match wins; the default applies to a transfer no rule matches,
 * and a policy change that no rule names is allowed.
 */

import type { MemberRole } from '../access.ts';
import type { KycStatus } from '../customers.ts';
import {
  DEFAULT_CHANGE_RULE_ID,
  DEFAULT_GOVERNED_KINDS,
  type GovernedChangeKind,
} from '../governedChanges.ts';
import { type Currency, formatAmount } from '../money.ts';
import type { RiskLevel } from '../risk.ts';
import type { DestinationType, Rail } from '../transfers.ts';

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
 * The rule pilot and production organizations start with: a role grant, an elevated key, a policy change,
 * a conversion rate or a payout's reversal waits for one other `admin`'s approval. The sandbox starts without it.
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

/** A batch's total or a loan's principal as an internal movement out of a wallet, matched as a transfer is. */
function walletMovement(
  amountMinor: bigint,
  currency: Currency,
  sourceWalletId: string,
): Pick<TransferFacts, 'amountMinor' | 'currency' | 'rail' | 'destinationType' | 'sourceWalletId'> {
  return { amountMinor, currency, rail: 'internal', destinationType: 'wallet', sourceWalletId };
}

/** Why a rule's match holds for the subject (what it saw), or null when it does not. */
function matchSubject(
  match: PolicyMatch,
  subject: PolicySubject,
): Record<string, string | number | boolean> | null {
  switch (subject.operation) {
    case 'transfer':
      return matchTransfer(match, subject.facts);
    case 'payment_batch': {
      const { totalMinor, currency, sourceWalletId } = subject.facts;
      return matchTransfer(match, walletMovement(totalMinor, currency, sourceWalletId));
    }
    case 'change':
      return match.kinds === undefined || match.kinds.includes(subject.kind) ? { kind: subject.kind } : null;
    case 'loan': {
      const { principalMinor, currency, walletId, riskLevel, kycStatus } = subject.facts;
      return matchTransfer(match, {
        ...walletMovement(principalMinor, currency, walletId),
        riskLevel,
        kycStatus,
      });
    }
    case 'policy.update':
      return {};
  }
}

/** The policy's decision on an operation: the first rule for it that matches, else the default. */
export function evaluatePolicy(policy: Policy, subject: PolicySubject): PolicyDecision {
  for (const rule of policy.rules) {
    if (rule.appliesTo !== subject.operation) continue;
    const matched = matchSubject(rule.match, subject);
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
