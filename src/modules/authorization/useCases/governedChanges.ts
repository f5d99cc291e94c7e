/**
 * Governed changes: one mechanism for every sensitive setting. A route hands its request to
 * `proposeIfGoverned` before doing anything: when the organization's policy has a `change` rule for the
 * kind that requires approval, the request is checked up front (its kind's checks, then a dry run of the
 * change inside a savepoint that is rolled back, so a change that could not be made is refused now, not at
 * approval) and stored as a pending change with its approval (resource type `change`); the route answers
 * 202 with it. Otherwise (no rule, or `allow`) the route goes on and applies the change at once, as before.
 * This file proposes and reads changes; governedChangeDecisions.ts applies or closes them when their
 * approval is decided. Each kind's own rules come from `deps.changeKinds`, which the composition root
 * fills from governedChangeKinds.ts.
 *
 * The `policy` kind keeps its own record (`policy_change`, with its base version and `superseded`): see
 * updatePolicy in policies.ts, which asks the same `change` rules.
 */

import type { ChangeRequest, Deps } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence } from '../../../app/evidence.ts';
import { getById, listPage } from '../../../app/reads.ts';
import type { Approval } from '../../../domain/approvals.ts';
import { evaluatePolicy, type PolicyDecision } from '../../../domain/decisions/policies.ts';
import { AppError, validationError } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import {
  GOVERNED_CHANGE_PAYLOAD_CHARS_MAX,
  type GovernedChange,
  type GovernedChangeKind,
} from '../../../domain/governedChanges.ts';
import type { Queryable } from '../../../store/store.ts';
import { releaseSavepoint, rollbackToSavepoint, setSavepoint } from '../../../store/transactions.ts';
import {
  findGovernedChange,
  type GovernedChangeFilter,
  insertGovernedChange,
  listGovernedChanges,
} from '../repository/governedChanges.ts';
import { newApproval, openApproval } from './approvals.ts';
import { currentPolicyIn } from './policies.ts';

/** Who proposes a change: the member (or, for a key acting for no member, the key) and their key. */
export interface Proposer {
  /** The member's id, else the key's: the approval's initiator, who never votes on it. */
  id: string;
  keyId: string | null;
  memberId: string | null;
}

/** The proposer as evidence names them. */
export function proposerOf(actor: EvidenceActor): Proposer {
  if (actor.type === 'system') return { id: 'system', keyId: null, memberId: null };
  return { id: actor.member ?? actor.id, keyId: actor.id, memberId: actor.member ?? null };
}

export function changeEventData(change: GovernedChange): Record<string, unknown> {
  return {
    change_id: change.id,
    kind: change.kind,
    action: change.action,
    target_id: change.targetId,
    status: change.status,
    proposed_by: change.proposedBy,
    approval_id: change.approvalId,
    policy_version: change.policyVersion,
    rule: change.rule,
    failure: change.failure,
  };
}

export function changeEvent(deps: Deps, change: GovernedChange, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: change.organizationId,
      type: 'change.updated',
      resourceId: change.id,
      data: changeEventData(change),
    },
    now,
  );
}

/** What the policy decides for a change of this kind, from its current version (read in `tx`). */
export async function changeDecision(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  kind: GovernedChangeKind,
): Promise<PolicyDecision> {
  const policy = await currentPolicyIn(tx, deps, organizationId);
  return evaluatePolicy(policy, { operation: 'change', kind });
}

/** Makes the change in a savepoint and rolls it back: whatever the apply would refuse is refused now. */
async function dryRun(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  request: ChangeRequest,
  actor: EvidenceActor,
  proposer: Proposer,
): Promise<void> {
  await setSavepoint(tx, 'governed_change_check');
  try {
    await deps.changeKinds[request.kind].apply(tx, deps, {
      organizationId,
      action: request.action,
      targetId: request.targetId,
      payload: request.payload as Record<string, unknown>,
      proposedBy: proposer.id,
      actor,
    });
  } finally {
    await rollbackToSavepoint(tx, 'governed_change_check');
    await releaseSavepoint(tx, 'governed_change_check');
  }
}

/**
 * The one call a route makes before changing a governed setting. Returns null when the change may be made
 * now (the route goes on as before); a 422 `policy_denied` when a rule denies it; else the pending change,
 * checked, stored and with its approval open (the route answers 202 with it).
 */
export async function proposeIfGoverned(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  request: ChangeRequest,
  actor: EvidenceActor,
): Promise<GovernedChange | null> {
  const handler = deps.changeKinds[request.kind];
  if (handler.governs && !handler.governs(request)) return null;
  const decision = await decisionOnRequest(tx, deps, organizationId, request);
  if (decision.decision === 'deny') {
    throw new AppError({
      status: 422,
      code: 'policy_denied',
      title: 'Denied by policy',
      detail: `Policy version ${decision.policyVersion}, rule '${decision.rule}', denies ${request.kind} changes.`,
    });
  }
  if (decision.decision === 'allow') return null;
  if (JSON.stringify(request.payload).length > GOVERNED_CHANGE_PAYLOAD_CHARS_MAX) {
    throw validationError(
      'body',
      `a change waiting for approval holds at most ${GOVERNED_CHANGE_PAYLOAD_CHARS_MAX} characters of JSON`,
      'too_large',
    );
  }
  const proposer = proposerOf(actor);
  // Stored as JSON and applied from it, so checked and dry-run from the same JSON.
  const payload = JSON.parse(JSON.stringify(request.payload)) as Record<string, unknown>;
  request = { ...request, payload };
  handler.check?.(deps, request);
  await dryRun(tx, deps, organizationId, request, actor, proposer);
  const now = deps.now();
  const id = deps.newId('governedChange');
  const approval = newApproval(deps, {
    organizationId,
    resourceType: 'change',
    resourceId: id,
    decision,
    initiatedBy: proposer.id,
    now,
  });
  const change = pendingChange(request, {
    id,
    organizationId,
    payload: handler.seal ? handler.seal(deps, id, payload) : payload,
    proposer,
    approval,
    decision,
    now,
  });
  await insertGovernedChange(tx, change);
  await openApproval(tx, deps, approval);
  await appendEvidence(tx, deps, [proposalEvidence(change, decision, actor)]);
  await recordEvents(tx, deps, [changeEvent(deps, change, now)]);
  return change;
}

/**
 * The policy's decision on the request; an `allow` becomes `require_approval` when the kind needs a second
 * member whatever the policy says.
 */
async function decisionOnRequest(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  request: ChangeRequest,
): Promise<PolicyDecision> {
  const handler = deps.changeKinds[request.kind];
  const decision = await changeDecision(tx, deps, organizationId, request.kind);
  const intrinsic =
    decision.decision === 'allow'
      ? await handler.intrinsicApproval?.(tx, deps, organizationId, request)
      : undefined;
  if (intrinsic === undefined) return decision;
  return {
    decision: 'require_approval',
    policyVersion: decision.policyVersion,
    rule: intrinsic.rule,
    approval: intrinsic.approval,
    matched: { kind: request.kind },
  };
}

/** The change as stored while it waits for its approval. */
function pendingChange(
  request: ChangeRequest,
  fields: {
    id: string;
    organizationId: string;
    /** As stored: sealed by the kind when it has secrets. */
    payload: Record<string, unknown>;
    proposer: Proposer;
    approval: Approval;
    decision: PolicyDecision;
    now: Date;
  },
): GovernedChange {
  return {
    id: fields.id,
    organizationId: fields.organizationId,
    kind: request.kind,
    action: request.action,
    targetId: request.targetId,
    payload: fields.payload,
    status: 'pending',
    proposedBy: fields.proposer.id,
    proposedByKey: fields.proposer.keyId,
    approvalId: fields.approval.id,
    policyVersion: fields.decision.policyVersion,
    rule: fields.decision.rule,
    failure: null,
    createdAt: fields.now,
    decidedAt: null,
    appliedAt: null,
  };
}

function proposalEvidence(
  change: GovernedChange,
  decision: PolicyDecision,
  actor: EvidenceActor,
): EvidenceDraft {
  return {
    organizationId: change.organizationId,
    kind: 'change.proposal',
    actor,
    data: {
      change_id: change.id,
      kind: change.kind,
      action: change.action,
      target_id: change.targetId,
      proposed_by: change.proposedBy,
      decision: decision.decision,
      policy_version: decision.policyVersion,
      rule: decision.rule,
      approval_id: change.approvalId,
    },
  };
}

export const getGovernedChange = getById<GovernedChange>(findGovernedChange, 'change');

export const listChanges = listPage<GovernedChangeFilter, GovernedChange>(listGovernedChanges);
