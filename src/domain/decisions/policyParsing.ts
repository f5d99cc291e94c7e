/**
 * Parsing a policy body from its wire form (also its stored form): rules with their matchers, actions and
 * approval requirements, and the default, checked field by field; the first fault is a 400 naming it.
 */

import { MEMBER_ROLES } from '../access.ts';
import { KYC_STATUSES } from '../customers.ts';
import { validationError } from '../errors.ts';
import { GOVERNED_CHANGE_KINDS } from '../governedChanges.ts';
import { isId } from '../ids.ts';
import { isRecord, refuseUnknownFields, requireObject, requireOneOf, requireWholeNumber } from '../json.ts';
import { parseAmount, requireCurrency } from '../money.ts';
import { RISK_LEVELS } from '../risk.ts';
import { DESTINATION_TYPES, RAILS } from '../transfers.ts';
import {
  type AggregateMatch,
  type AmountRange,
  APPROVAL_EXPIRES_IN_SECONDS_DEFAULT,
  APPROVAL_EXPIRES_IN_SECONDS_MAX,
  APPROVAL_EXPIRES_IN_SECONDS_MIN,
  APPROVAL_QUORUM_MAX,
  type ApprovalRequirement,
  DEFAULT_RULE_ID,
  type DefaultPolicyRule,
  INITIAL_DEFAULT_RULE,
  LOAN_MATCHERS,
  PAYMENT_BATCH_MATCHERS,
  POLICY_ACTIONS,
  POLICY_DESCRIPTION_CHARS_MAX,
  POLICY_MATCH_VALUES_MAX,
  POLICY_OPERATIONS,
  POLICY_RULE_ID_PATTERN,
  POLICY_RULES_MAX,
  POLICY_WINDOW_SECONDS_MAX,
  type PolicyAction,
  type PolicyMatch,
  type PolicyOperation,
  type PolicyRule,
} from './policies.ts';

type Raw = Record<string, unknown>;

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
    if (!isRecord(entry))
      throw validationError(at, `${at} must be an object {currency, gte, lt}`, 'invalid_type');
    refuseUnknownFields(entry, ['currency', 'gte', 'lt'], at);
    const currency = requireCurrency(entry.currency, `${at}.currency`);
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

function parseAggregate(given: unknown, param: string): AggregateMatch {
  const raw = requireObject(given, param);
  refuseUnknownFields(raw, ['window_seconds', 'count_at_least', 'sum_at_least', 'currency'], param);
  const windowSeconds = requireWholeNumber(
    raw.window_seconds,
    `${param}.window_seconds`,
    1,
    POLICY_WINDOW_SECONDS_MAX,
  );
  const countAtLeast =
    raw.count_at_least === undefined
      ? null
      : requireWholeNumber(raw.count_at_least, `${param}.count_at_least`, 1, 1_000_000);
  let sumAtLeast: AggregateMatch['sumAtLeast'] = null;
  if (raw.sum_at_least !== undefined) {
    const currency = requireCurrency(raw.currency, `${param}.currency`);
    sumAtLeast = { currency, amountMinor: parseAmount(raw.sum_at_least, currency, `${param}.sum_at_least`) };
  } else if (raw.currency !== undefined) {
    throw validationError(`${param}.currency`, `${param}.currency goes with sum_at_least`, 'unexpected');
  }
  if (countAtLeast === null && sumAtLeast === null) {
    throw validationError(param, `${param} needs count_at_least, sum_at_least or both`, 'missing');
  }
  return { windowSeconds, countAtLeast, sumAtLeast };
}

function parseMatch(given: unknown, param: string): PolicyMatch {
  if (given === undefined) return {};
  const raw = requireObject(given, param);
  refuseUnknownFields(
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
  if (!isRecord(raw)) {
    throw validationError(param, `${param} is required for require_approval: {quorum, roles}`, 'missing');
  }
  refuseUnknownFields(raw, ['quorum', 'roles', 'distinct_roles', 'expires_in_seconds'], param);
  const quorum = requireWholeNumber(raw.quorum, `${param}.quorum`, 1, APPROVAL_QUORUM_MAX);
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
      : requireWholeNumber(
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
  const action = requireOneOf(raw.action, POLICY_ACTIONS, `${param}.action`);
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

function parseRule(given: unknown, param: string): PolicyRule {
  const raw = requireObject(given, param);
  refuseUnknownFields(raw, ['id', 'description', 'applies_to', 'match', 'action', 'approval'], param);
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
  const appliesTo = parseAppliesTo(raw.applies_to, param);
  const match = parseMatch(raw.match, `${param}.match`);
  refuseMatchersOutsideOperation(appliesTo, match, param);
  const { action, approval } = parseAction(raw, param);
  return {
    id: raw.id,
    description: typeof raw.description === 'string' ? raw.description : null,
    appliesTo,
    match,
    action,
    approval,
  };
}

/** The operation a rule governs; a rule that names none governs transfers. */
function parseAppliesTo(raw: unknown, param: string): PolicyOperation {
  return requireOneOf(raw ?? 'transfer', POLICY_OPERATIONS, `${param}.applies_to`);
}

/** Refuses a matcher the rule's operation has no fact for (a batch has no rail, a change no amount…). */
function refuseMatchersOutsideOperation(appliesTo: PolicyOperation, match: PolicyMatch, param: string): void {
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
    if (!isRecord(body.default))
      throw validationError('default', 'default must be an object {action, approval}', 'invalid_type');
    refuseUnknownFields(body.default, ['action', 'approval'], 'default');
    defaultRule = parseAction(body.default, 'default');
  }
  return { rules, defaultRule };
}
