/**
 * A policy's stored and wire form (the same JSON): rules, the default and approval requirements written
 * out, and read back through the parser.
 */
import { formatAmount } from '../money.ts';
import type { ApprovalRequirement, DefaultPolicyRule, PolicyMatch, PolicyRule } from './policies.ts';
import { parsePolicyBody } from './policyParsing.ts';

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
