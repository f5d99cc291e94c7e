/** Wire forms of members, policies, policy changes and approvals. */

import type { Approval } from '../../../domain/approvals.ts';
import type { Policy } from '../../../domain/decisions/policies.ts';
import { defaultRuleJson, ruleJson } from '../../../domain/decisions/policyJson.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import type { Member } from '../domain.ts';
import { approvalEventData } from '../useCases/approvals.ts';
import type { PolicyChange } from '../useCases/policies.ts';

export function presentMember(member: Member) {
  return {
    object: 'member',
    id: member.id,
    email: member.email,
    name: member.name,
    roles: member.roles,
    status: member.status,
    created_by: member.createdBy,
    created_at: member.createdAt.toISOString(),
    updated_at: member.updatedAt.toISOString(),
  };
}

export function presentPolicy(policy: Policy) {
  return {
    object: 'policy',
    version: policy.version,
    rules: policy.rules.map(ruleJson),
    default: defaultRuleJson(policy.defaultRule),
    created_by: policy.createdBy,
    approval: policy.approvalId,
    created_at: policy.createdAt.toISOString(),
  };
}

export function presentPolicyChange(change: PolicyChange, approvalId: string | null) {
  return {
    object: 'policy_change',
    id: change.id,
    status: change.status,
    base_version: change.baseVersion,
    applied_version: change.appliedVersion,
    rules: change.rules.map(ruleJson),
    default: defaultRuleJson(change.defaultRule),
    approval: approvalId,
    created_by: change.createdBy,
    created_at: change.createdAt.toISOString(),
    decided_at: isoOrNull(change.decidedAt),
  };
}

/** The approval resource: the same fields as its `approval.updated` event, named as a resource. */
export function presentApproval(approval: Approval) {
  const { approval_id: id, ...rest } = approvalEventData(approval);
  return {
    object: 'approval',
    id,
    ...rest,
    created_at: approval.createdAt.toISOString(),
  };
}
