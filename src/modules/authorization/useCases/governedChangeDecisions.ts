/**
 * A governed change's approval decided: the vote that approves the change applies it in its own transaction
 * through the kind's `apply` (the use case the route calls), with evidence naming the proposer, the
 * approvers and the rule; a change that can no longer be made then is `failed` with the problem's code, the
 * approval staying approved. A rejection, expiry or the proposer's cancel leaves it unapplied. The
 * approval's resource (this change) is locked before the approval on every path, as approvals.ts does for
 * every resource.
 */

import type { ApprovableResource, Deps, RegisteredChangeKind } from '../../../app/deps.ts';
import { recordEvents } from '../../../app/events.ts';
import { apiKeyActor, appendEvidence } from '../../../app/evidence.ts';
import { lockById } from '../../../app/reads.ts';
import type { Approval } from '../../../domain/approvals.ts';
import { AppError, invalidStateTransition } from '../../../domain/errors.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import type { GovernedChange } from '../../../domain/governedChanges.ts';
import type { Queryable } from '../../../store/store.ts';
import { releaseSavepoint, rollbackToSavepoint, setSavepoint } from '../../../store/transactions.ts';
import { findGovernedChange, saveGovernedChange } from '../repository/governedChanges.ts';
import { cancelApprovalOf } from './approvals.ts';
import { changeEvent, proposerOf } from './governedChanges.ts';

/** The change with this id, its row locked for the transaction; 404 when there is none. */
const lockGovernedChange = lockById(findGovernedChange, 'change');

function actorOfProposer(change: GovernedChange): EvidenceActor {
  if (change.proposedByKey === null) return { type: 'system' };
  return apiKeyActor(
    change.proposedByKey,
    change.proposedBy === change.proposedByKey ? null : change.proposedBy,
  );
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
    decided = await applyApprovedChange(tx, deps, change, now);
    await appendEvidence(tx, deps, [applicationEvidence(change, decided, approval, actor)]);
  } else {
    const status = approval.status === 'pending' ? 'canceled' : approval.status;
    decided = { ...change, status, decidedAt: now };
  }
  await saveGovernedChange(tx, decided);
  await recordEvents(tx, deps, [changeEvent(deps, decided, now)]);
  return decided.status;
}

/**
 * Makes an approved change through its kind's apply, in a savepoint: `applied`, or `failed` with the
 * problem's code when the apply refuses it.
 */
async function applyApprovedChange(
  tx: Queryable,
  deps: Deps,
  change: GovernedChange,
  now: Date,
): Promise<GovernedChange> {
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
    return {
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
    return {
      ...change,
      status: 'failed',
      failure: { code: error.code, detail: error.detail ?? error.message },
      decidedAt: now,
    };
  }
}

function applicationEvidence(
  change: GovernedChange,
  decided: GovernedChange,
  approval: Approval,
  actor: EvidenceActor,
): EvidenceDraft {
  return {
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
  };
}

/** The proposer withdraws a pending change: its approval is canceled and the change is never made. */
export async function cancelGovernedChange(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  actor: EvidenceActor,
): Promise<GovernedChange> {
  const change = await lockGovernedChange(tx, organizationId, id);
  if (proposerOf(actor).id !== change.proposedBy) {
    throw new AppError({
      status: 403,
      code: 'not_proposer',
      title: 'Forbidden',
      detail: `Only the member who proposed change ${id} may cancel it; others vote on its approval.`,
    });
  }
  if (change.status !== 'pending') {
    throw invalidStateTransition(
      'Conflict',
      `Change ${id} is ${change.status}; only a pending change can be canceled.`,
    );
  }
  const now = deps.now();
  await cancelApprovalOf(tx, deps, change.id, actor, now);
  const canceled: GovernedChange = { ...change, status: 'canceled', decidedAt: now };
  await saveGovernedChange(tx, canceled);
  await recordEvents(tx, deps, [changeEvent(deps, canceled, now)]);
  return canceled;
}

/** A governed change as an approval's resource. */
export const GOVERNED_CHANGE_APPROVALS: ApprovableResource & { type: 'change' } = {
  type: 'change',
  async lock(tx, organizationId, resourceId) {
    await lockChange(tx, organizationId, resourceId);
    return { settle: decideGovernedChange };
  },
};
