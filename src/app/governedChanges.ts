/**
 * Governed changes: one mechanism for every sensitive setting. A route hands its request to
 * `proposeIfGoverned` before doing anything: when the organization's policy has a `change` rule for the
 * kind that requires approval, the request is checked up front (its kind's checks, then a dry run of the
 * change inside a savepoint that is rolled back, so a change that could not be made is refused now, not at
 * approval) and stored as a pending change with its approval (resource type `change`); the route answers
 * 202 with it. Otherwise (no rule, or `allow`) the route goes on and applies the change at once, as before.
 *
 * The vote that approves the change applies it in its own transaction through the kind's `apply` (the use
 * case the route calls), with evidence naming the proposer, the approvers and the rule; a change that can
 * no longer be made then is `failed` with the problem's code, the approval staying approved. A rejection,
 * expiry or the proposer's cancel leaves it unapplied. The approval's resource (this change) is locked before
 * the approval on every path, as approvals.ts does for every resource.
 *
 * Past 400 lines: proposing, listing, applying on the approving vote and canceling share the change's lock
 * and its evidence; each kind's own rules come from `deps.changeKinds`, which the composition root fills
 * from governedChangeKinds.ts.
 *
 * The `policy` kind keeps its own record (`policy_change`, with its base version and `superseded`): see
 * updatePolicy in policies.ts, which asks the same `change` rules.
 */
import type { Approval } from '../domain/approvals.ts';
import {
  type ApprovalRequirement,
  evaluatePolicy,
  type PolicyDecision,
} from '../domain/decisions/policies.ts';
import { AppError, resourceMissing, validationError } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import type { EvidenceActor } from '../domain/evidence.ts';
import {
  GOVERNED_CHANGE_PAYLOAD_CHARS_MAX,
  type GovernedChange,
  type GovernedChangeKind,
} from '../domain/governedChanges.ts';
import { type Page, type PageRequest, toPage } from '../domain/pagination.ts';
import { findPendingApprovalOf, saveApprovalStatus } from '../store/repositories/approvals.ts';
import {
  findGovernedChange,
  type GovernedChangeFilter,
  insertGovernedChange,
  listGovernedChanges,
  saveGovernedChange,
} from '../store/repositories/governedChanges.ts';
import type { Queryable } from '../store/store.ts';
import { releaseSavepoint, rollbackToSavepoint, setSavepoint } from '../store/transactions.ts';
import { type ApprovableResource, approvalEvent, newApproval, openApproval } from './approvals.ts';
import type { Deps } from './deps.ts';
import { newEvent, recordEvents } from './events.ts';
import { apiKeyActor, appendEvidence } from './evidence.ts';
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

function actorOfProposer(change: GovernedChange): EvidenceActor {
  if (change.proposedByKey === null) return { type: 'system' };
  return apiKeyActor(
    change.proposedByKey,
    change.proposedBy === change.proposedByKey ? null : change.proposedBy,
  );
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

function changeEvent(deps: Deps, change: GovernedChange, now: Date): EventRecord {
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
  let decision = await changeDecision(tx, deps, organizationId, request.kind);
  const intrinsic =
    decision.decision === 'allow'
      ? await handler.intrinsicApproval?.(tx, deps, organizationId, request)
      : undefined;
  if (intrinsic !== undefined) {
    decision = {
      decision: 'require_approval',
      policyVersion: decision.policyVersion,
      rule: intrinsic.rule,
      approval: intrinsic.approval,
      matched: { kind: request.kind },
    };
  }
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
  const change: GovernedChange = {
    id,
    organizationId,
    kind: request.kind,
    action: request.action,
    targetId: request.targetId,
    payload: handler.seal ? handler.seal(deps, id, payload) : payload,
    status: 'pending',
    proposedBy: proposer.id,
    proposedByKey: proposer.keyId,
    approvalId: approval.id,
    policyVersion: decision.policyVersion,
    rule: decision.rule,
    failure: null,
    createdAt: now,
    decidedAt: null,
    appliedAt: null,
  };
  await insertGovernedChange(tx, change);
  await openApproval(tx, deps, approval);
  await appendEvidence(tx, deps, [
    {
      organizationId,
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
        approval_id: approval.id,
      },
    },
  ]);
  await recordEvents(tx, deps, [changeEvent(deps, change, now)]);
  return change;
}

/** Locks a change (an approval's resource, before its approval). */
export async function lockChange(tx: Queryable, organizationId: string, id: string): Promise<void> {
  await findGovernedChange(tx, organizationId, id, { forUpdate: true });
}

/**
 * A change's approval was decided (the caller holds the change's lock, then the approval's): approved, the
 * change is made now, in this transaction, through its kind's apply; otherwise it is closed unapplied.
 * Returns the change's new status.
 */
export async function decideGovernedChange(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
  actor: EvidenceActor,
): Promise<string> {
  const change = await findGovernedChange(tx, approval.organizationId, approval.resourceId);
  if (!change) return 'missing';
  if (change.status !== 'pending') return change.status;
  const now = deps.now();
  let decided: GovernedChange;
  if (approval.status === 'approved') {
    const handler = deps.changeKinds[change.kind as RegisteredChangeKind];
    const payload = handler.open ? handler.open(deps, change.id, change.payload) : change.payload;
    await setSavepoint(tx, 'governed_change_apply');
    try {
      const applied = await handler.apply(tx, deps, {
        organizationId: change.organizationId,
        action: change.action,
        targetId: change.targetId,
        payload,
        proposedBy: change.proposedBy,
        actor: actorOfProposer(change),
      });
      await releaseSavepoint(tx, 'governed_change_apply');
      decided = {
        ...change,
        status: 'applied',
        targetId: applied.targetId ?? change.targetId,
        decidedAt: now,
        appliedAt: now,
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // The change could not be made as the state now stands (a member removed, a version moved on…).
      await rollbackToSavepoint(tx, 'governed_change_apply');
      await releaseSavepoint(tx, 'governed_change_apply');
      decided = {
        ...change,
        status: 'failed',
        failure: { code: error.code, detail: error.detail ?? error.message },
        decidedAt: now,
      };
    }
    await appendEvidence(tx, deps, [
      {
        organizationId: change.organizationId,
        kind: 'change.application',
        actor,
        data: {
          change_id: change.id,
          kind: change.kind,
          action: change.action,
          target_id: decided.targetId,
          status: decided.status,
          failure_code: decided.failure?.code ?? null,
          proposed_by: change.proposedBy,
          approved_by: approval.votes
            .filter((v) => v.decision === 'approve')
            .map((v) => ({ member: v.memberId, role: v.role })),
          approval_id: approval.id,
          policy_version: approval.policyVersion,
          rule: approval.rule,
        },
      },
    ]);
  } else {
    const status = approval.status === 'pending' ? 'canceled' : approval.status;
    decided = { ...change, status, decidedAt: now };
  }
  await saveGovernedChange(tx, decided);
  await recordEvents(tx, deps, [changeEvent(deps, decided, now)]);
  return decided.status;
}

/** The proposer withdraws a pending change: its approval is canceled and the change is never made. */
export async function cancelGovernedChange(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<GovernedChange> {
  const change = await findGovernedChange(tx, organizationId, id, { forUpdate: true });
  if (!change) throw resourceMissing('change', id);
  if (proposerOf(actor).id !== change.proposedBy) {
    throw new AppError({
      status: 403,
      code: 'not_proposer',
      title: 'Forbidden',
      detail: `Only the member who proposed change ${id} may cancel it; others vote on its approval.`,
    });
  }
  if (change.status !== 'pending') {
    throw new AppError({
      status: 409,
      code: 'invalid_state_transition',
      title: 'Conflict',
      detail: `Change ${id} is ${change.status}; only a pending change can be canceled.`,
    });
  }
  const approval = await findPendingApprovalOf(tx, change.id);
  const now = deps.now();
  if (approval) {
    const canceled: Approval = { ...approval, status: 'canceled', decidedAt: now };
    await saveApprovalStatus(tx, canceled);
    await appendEvidence(tx, deps, [
      {
        organizationId,
        kind: 'approval.decision',
        actor,
        data: {
          approval_id: approval.id,
          status: 'canceled',
          resource_type: 'change',
          resource_id: change.id,
          policy_version: approval.policyVersion,
          rule: approval.rule,
          votes: approval.votes.map((v) => ({ member: v.memberId, role: v.role, decision: v.decision })),
          resource_status: 'canceled',
        },
      },
    ]);
    await recordEvents(tx, deps, [approvalEvent(deps, canceled, now)]);
  }
  const canceled: GovernedChange = { ...change, status: 'canceled', decidedAt: now };
  await saveGovernedChange(tx, canceled);
  await recordEvents(tx, deps, [changeEvent(deps, canceled, now)]);
  return canceled;
}

export async function getGovernedChange(
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<GovernedChange> {
  const change = await findGovernedChange(deps.store, organizationId, id);
  if (!change) throw resourceMissing('change', id);
  return change;
}

export async function listChanges(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<GovernedChangeFilter, keyof PageRequest>,
): Promise<Page<GovernedChange>> {
  return toPage(
    await listGovernedChanges(deps.store, organizationId, request, request.limit + 1),
    request.limit,
  );
}

/** A governed change as an approval's resource. */
export const GOVERNED_CHANGE_APPROVALS: ApprovableResource & { type: 'change' } = {
  type: 'change',
  async lock(tx, organizationId, resourceId) {
    await lockChange(tx, organizationId, resourceId);
    return { settle: decideGovernedChange };
  },
};

/** A change as a route proposes it: the kind, what it does, to what, and the request's body. */
export interface ChangeRequest {
  kind: RegisteredChangeKind;
  action: string;
  /** The resource changed (a member, a rule, a route…), or null for a creation. */
  targetId: string | null;
  /** The request's body (an object; its JSON is what is stored). */
  payload: object;
}

export interface ApplyInput {
  organizationId: string;
  action: string;
  targetId: string | null;
  payload: Record<string, unknown>;
  /** The proposer (member or key id), for use cases that record who created a version. */
  proposedBy: string;
  actor: EvidenceActor;
}

export interface ChangeKind {
  /** Whether this request is governed at all (an API key with only `read`/`write` is not); default yes. */
  governs?(request: ChangeRequest): boolean;
  /** Checks without the database that name the faulty field (the dry run of `apply` checks the rest). */
  check?(deps: Deps, request: ChangeRequest): void;
  /** Seals the secrets of a payload before it is stored, and opens them to apply it. */
  seal?(deps: Deps, changeId: string, payload: Record<string, unknown>): Record<string, unknown>;
  open?(deps: Deps, changeId: string, payload: Record<string, unknown>): Record<string, unknown>;
  /**
   * Why this change needs a second member whatever the policy says (a conversion rate moved past its band),
   * or undefined when the policy alone decides.
   */
  intrinsicApproval?(
    tx: Queryable,
    deps: Deps,
    organizationId: string,
    request: ChangeRequest,
  ): Promise<{ rule: string; approval: ApprovalRequirement } | undefined>;
  /** Makes the change; the new resource's id for a creation. */
  apply(tx: Queryable, deps: Deps, input: ApplyInput): Promise<{ targetId: string | null }>;
}

/** A kind of change this registry makes (the `policy` kind keeps its own record). */
export type RegisteredChangeKind = Exclude<GovernedChangeKind, 'policy'>;
