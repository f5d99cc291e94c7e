/**
 * Authorization policies as data: an organization's rules, versioned as a whole. Each change writes a new
 * version (old decisions keep pointing at theirs) and emits `policy.updated`; when the current policy says
 * changes need approval, the change waits as a `policy_change` with an approval, and is applied once the
 * quorum approves it. The ledger writer reads the current version through a short per-process cache.
 */

import { rowLockedApprovableResource } from '../../../app/approvableResources.ts';
import type { Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { organizationCache } from '../../../app/organizationCache.ts';
import { getById, listPage } from '../../../app/reads.ts';
import { settingVersionReads, settingVersionWrites } from '../../../app/settingVersions.ts';
import type { Approval } from '../../../domain/approvals.ts';
import {
  DEFAULT_CHANGE_RULE,
  DEFAULT_RULE_ID,
  evaluatePolicy,
  INITIAL_DEFAULT_RULE,
  type Policy,
  type PolicyDecision,
} from '../../../domain/decisions/policies.ts';
import { defaultRuleJson, ruleJson } from '../../../domain/decisions/policyJson.ts';
import { parsePolicyBody } from '../../../domain/decisions/policyParsing.ts';
import { AppError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import type { KeysetFilter } from '../../../store/repositories/rows.ts';
import type { Queryable } from '../../../store/store.ts';
import { findLatestApprovalIdOf } from '../repository/approvals.ts';
import {
  findCurrentPolicy,
  findPolicyChange,
  findPolicyVersion,
  insertPolicyChange,
  insertPolicyVersion,
  listPolicyChanges,
  listPolicyVersions,
  lockPolicyWrites,
  type PolicyChange,
  savePolicyChange,
} from '../repository/policies.ts';
import { newApproval, openApproval } from './approvals.ts';

// Record types the HTTP edge presents, given through the use case layer (src/http never imports the store).
export type { PolicyChange } from '../repository/policies.ts';

/**
 * How long a process keeps an organization's policy before reading it again: a change made through another
 * process applies within this bound (at once in the process that made it).
 */
export const POLICY_CACHE_TTL_MS = 5_000;
/** Organizations whose policy one process keeps at most. */
export const POLICY_CACHE_ENTRIES_MAX = 10_000;

/**
 * The first version every organization has: every transfer allowed; in pilot and production, one rule:
 * sensitive changes wait for a second admin (DEFAULT_CHANGE_RULE). The sandbox starts with no rules.
 */
function initialPolicy(deps: Pick<Deps, 'environment'>, organizationId: string, now: Date): Policy {
  return {
    organizationId,
    version: 1,
    rules: deps.environment === 'sandbox' ? [] : [DEFAULT_CHANGE_RULE],
    defaultRule: INITIAL_DEFAULT_RULE,
    createdBy: 'system',
    approvalId: null,
    createdAt: now,
  };
}

/** The policy as a setting kept in numbered versions: its reads, its writes, and its version 1. */
const policySetting = {
  findCurrent: findCurrentPolicy,
  findVersion: findPolicyVersion,
  listVersions: listPolicyVersions,
  lockWrites: lockPolicyWrites,
  insertVersion: insertPolicyVersion,
  initial: initialPolicy,
  what: 'policy version',
  conflict: { setting: 'policy', code: 'policy_version_conflict', title: 'Policy changed' },
  cache: organizationCache<Policy>(POLICY_CACHE_TTL_MS, POLICY_CACHE_ENTRIES_MAX),
} as const;
const policyVersions = settingVersionReads(policySetting);
const policyWrites = settingVersionWrites(policySetting);

/** The current version, writing version 1 the first time an organization's policy is needed. */
export const currentPolicyIn = policyWrites.currentIn;

/** The organization's current policy, through the process cache (the ledger writer's read). */
export const loadPolicy = policyWrites.load;

const forgetPolicy = policyWrites.forget;

export const getCurrentPolicy = policyVersions.getCurrent;
export const getPolicyVersion = policyVersions.getVersion;
export const listVersions = policyVersions.listVersions;

export function policyEvent(deps: Deps, policy: Policy, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: policy.organizationId,
      type: 'policy.updated',
      resourceId: null,
      data: {
        version: policy.version,
        rules: policy.rules.length,
        created_by: policy.createdBy,
        approval_id: policy.approvalId,
      },
    },
    now,
  );
}

/** Writes the next version with its evidence and event. */
async function writeVersion(
  tx: Queryable,
  deps: Deps,
  previous: Policy,
  next: Pick<Policy, 'rules' | 'defaultRule' | 'createdBy' | 'approvalId'>,
  actor: EvidenceActor,
): Promise<Policy> {
  const now = deps.now();
  const policy: Policy = {
    ...next,
    organizationId: previous.organizationId,
    version: previous.version + 1,
    createdAt: now,
  };
  await insertPolicyVersion(tx, policy);
  await appendEvidence(tx, deps, [
    {
      organizationId: policy.organizationId,
      kind: 'policy.update',
      actor,
      data: {
        version: policy.version,
        previous_version: previous.version,
        approval_id: policy.approvalId,
        rules: policy.rules.map(ruleJson) as never,
        default: defaultRuleJson(policy.defaultRule) as never,
      },
    },
  ]);
  await recordEvents(tx, deps, [policyEvent(deps, policy, now)]);
  forgetPolicy(deps, policy.organizationId);
  return policy;
}

export interface PolicyUpdateInput {
  rules?: unknown;
  default?: unknown;
  /** The version the change was written against; a newer current version is a 409. */
  base_version?: number | undefined;
}

export type PolicyUpdateResult =
  | { kind: 'applied'; policy: Policy }
  | { kind: 'pending'; change: PolicyChange; approval: Approval };

/**
 * Replaces the organization's rules with a new version, or, when the current policy requires approval for
 * `policy.update`, proposes the change and opens its approval (the proposer cannot approve it).
 */
export async function updatePolicy(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  input: PolicyUpdateInput,
  initiatedBy: string,
  actor: EvidenceActor,
): Promise<PolicyUpdateResult> {
  const parsed = parsePolicyBody(input);
  const current = await policyWrites.currentForChange(tx, deps, organizationId, input.base_version);
  const decision = decisionOnPolicyUpdate(current);
  if (decision.decision === 'deny') {
    throw new AppError({
      status: 422,
      code: 'policy_denied',
      title: 'Denied by policy',
      detail: `Policy version ${current.version}, rule '${decision.rule}', denies policy changes.`,
      param: 'rules',
    });
  }
  if (decision.decision === 'allow') {
    const policy = await writeVersion(
      tx,
      deps,
      current,
      { ...parsed, createdBy: initiatedBy, approvalId: null },
      actor,
    );
    return { kind: 'applied', policy };
  }
  return proposePolicyChange(tx, deps, { organizationId, current, parsed, decision, initiatedBy, actor });
}

/**
 * A `policy.update` rule decides first; else a `change` rule naming the `policy` kind (the default of
 * pilot and production). Either way a waiting change is a policy change with its own record.
 */
function decisionOnPolicyUpdate(current: Policy): PolicyDecision {
  const decision = evaluatePolicy(current, { operation: 'policy.update' });
  if (decision.rule !== DEFAULT_RULE_ID) return decision;
  return evaluatePolicy(current, { operation: 'change', kind: 'policy' });
}

/** Stores the change as pending against the current version and opens its approval. */
async function proposePolicyChange(
  tx: Queryable,
  deps: Deps,
  proposal: {
    organizationId: string;
    current: Policy;
    parsed: Pick<Policy, 'rules' | 'defaultRule'>;
    decision: PolicyDecision;
    initiatedBy: string;
    actor: EvidenceActor;
  },
): Promise<PolicyUpdateResult> {
  const { organizationId, current, parsed, decision, initiatedBy, actor } = proposal;
  const now = deps.now();
  const change: PolicyChange = {
    id: deps.newId('policyChange'),
    organizationId,
    status: 'pending_approval',
    baseVersion: current.version,
    appliedVersion: null,
    rules: parsed.rules,
    defaultRule: parsed.defaultRule,
    createdBy: initiatedBy,
    createdAt: now,
    decidedAt: null,
  };
  await insertPolicyChange(tx, change);
  const approval = newApproval(deps, {
    organizationId,
    resourceType: 'policy_change',
    resourceId: change.id,
    decision,
    initiatedBy,
    now,
  });
  await openApproval(tx, deps, approval);
  await appendEvidence(tx, deps, [
    {
      organizationId,
      kind: 'policy.decision',
      actor,
      data: {
        operation: 'policy.update',
        policy_change_id: change.id,
        decision: decision.decision,
        policy_version: decision.policyVersion,
        rule: decision.rule,
        approval_id: approval.id,
      },
    },
  ]);
  return { kind: 'pending', change, approval };
}

/**
 * A policy change's approval was decided (the caller holds the change's lock): applied as the next version
 * when approved and the policy has not moved since it was proposed, else superseded; rejected or expired
 * otherwise. Returns the change's new status.
 */
export async function decidePolicyChange(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
  actor: EvidenceActor,
): Promise<string> {
  const change = await findPolicyChange(tx, approval.organizationId, approval.resourceId);
  if (change?.status !== 'pending_approval') return change?.status ?? 'missing';
  const now = deps.now();
  let decided: PolicyChange;
  if (approval.status === 'approved') {
    await lockPolicyWrites(tx, change.organizationId);
    const current = await currentPolicyIn(tx, deps, change.organizationId);
    if (current.version !== change.baseVersion) {
      decided = { ...change, status: 'superseded', decidedAt: now };
    } else {
      const policy = await writeVersion(
        tx,
        deps,
        current,
        {
          rules: change.rules,
          defaultRule: change.defaultRule,
          createdBy: change.createdBy,
          approvalId: approval.id,
        },
        actor,
      );
      decided = { ...change, status: 'applied', appliedVersion: policy.version, decidedAt: now };
    }
  } else {
    decided = { ...change, status: approval.status === 'expired' ? 'expired' : 'rejected', decidedAt: now };
  }
  await savePolicyChange(tx, decided);
  return decided.status;
}

export const getPolicyChange = getById<PolicyChange>(findPolicyChange, 'policy change');

export const listChanges = listPage<KeysetFilter, PolicyChange>(listPolicyChanges);

/** A policy change as an approval's resource. */
export const POLICY_CHANGE_APPROVALS = rowLockedApprovableResource(
  'policy_change',
  findPolicyChange,
  decidePolicyChange,
);

/** The approval opened last on a policy change, if any: what its presentation links to. */
export function latestApprovalIdOfChange(
  deps: Deps,
  organizationId: string,
  changeId: string,
): Promise<string | null> {
  return findLatestApprovalIdOf(deps.store, organizationId, changeId);
}
