/**
 * A transfer as an approval's resource: held `pending_approval` until its approval is decided, then sent to
 * the rail (or settled, when internal), or given its hold back when rejected or expired. And a transfer as a
 * review case's subject: sent on, or to approval, when the case is cleared; rejected when it is rejected.
 */

import type { ApprovableResource, Deps, ReviewSubjects } from '../../../app/deps.ts';
import { type Approval, AWAITING_APPROVAL_STATUS_REASON } from '../../../domain/approvals.ts';
import { DEFAULT_RULE_ID } from '../../../domain/decisions/policies.ts';
import { AppError } from '../../../domain/errors.ts';
import type { EvidenceActor } from '../../../domain/evidence.ts';
import { REVIEW_REJECTED_STATUS_REASON } from '../../../domain/reviews.ts';
import type { Transfer } from '../../../domain/transferRecord.ts';
import type { Queryable } from '../../../store/store.ts';
import { findPolicyVersion, newApproval, openApproval } from '../../authorization/index.ts';
import { applyStatusChange, lockTransfer } from './statusChanges.ts';

/**
 * A transfer held for review whose policy also asked for approval: once the review clears it waits
 * `pending_approval`, with an approval opened now under the rule (of the version) that decided it.
 */
export async function awaitApprovalAfterReview(
  tx: Queryable,
  deps: Deps,
  transfer: Transfer,
): Promise<Transfer> {
  const authorization = transfer.authorization;
  if (!authorization) throw new Error('a transfer without a policy decision has no approval to wait for');
  const policy = await findPolicyVersion(tx, transfer.organizationId, authorization.policyVersion);
  const requirement =
    authorization.rule === DEFAULT_RULE_ID
      ? policy?.defaultRule.approval
      : policy?.rules.find((r) => r.id === authorization.rule)?.approval;
  if (!requirement)
    throw new Error(`policy ${authorization.policyVersion} has no approval rule ${authorization.rule}`);
  const now = deps.now();
  const approval = newApproval(deps, {
    organizationId: transfer.organizationId,
    resourceType: 'transfer',
    resourceId: transfer.id,
    decision: {
      decision: 'require_approval',
      policyVersion: authorization.policyVersion,
      rule: authorization.rule,
      approval: requirement,
      matched: {},
    },
    initiatedBy: transfer.createdBy ?? 'system',
    now,
  });
  const waiting = await applyStatusChange(tx, deps, transfer, {
    to: 'pending_approval',
    reason: AWAITING_APPROVAL_STATUS_REASON,
    approvalId: approval.id,
  });
  await openApproval(tx, deps, approval);
  return waiting;
}

/** Moves a transfer waiting for its approval on, once the approval is decided. */
async function settleTransfer(
  tx: Queryable,
  deps: Deps,
  approval: Approval,
  transfer: Transfer,
): Promise<string | null> {
  if (transfer.status !== 'pending_approval') return transfer.status;
  let moved: Transfer;
  if (approval.status === 'approved') {
    // Funds are already held: an internal transfer settles now; a payout goes to the rail's queue.
    const internal = transfer.rail === 'internal';
    moved = await applyStatusChange(tx, deps, transfer, {
      to: 'pending',
      nextRailCheckAt: internal ? null : deps.now(),
    });
    // A movement the release gate refused has failed already and goes no further.
    if (internal && moved.status === 'pending')
      moved = await applyStatusChange(tx, deps, moved, { to: 'settled' });
  } else if (approval.status === 'rejected') {
    moved = await applyStatusChange(tx, deps, transfer, {
      to: 'rejected',
      failureCode: 'approval_rejected',
      reason: 'approval_rejected',
    });
  } else if (approval.status === 'expired') {
    moved = await applyStatusChange(tx, deps, transfer, {
      to: 'expired',
      failureCode: 'approval_expired',
      reason: 'approval_expired',
    });
  } else {
    return transfer.status;
  }
  return moved.status;
}

export const TRANSFER_APPROVALS: ApprovableResource & { type: 'transfer' } = {
  type: 'transfer',
  async lock(tx, organizationId, resourceId) {
    const transfer = await lockTransfer(tx, organizationId, resourceId);
    return {
      transferId: transfer.id,
      settle: (tx, deps, approval) => settleTransfer(tx, deps, approval, transfer),
    };
  },
};

/**
 * Four eyes on a held payment: the member who made a transfer may stop it (reject its review) but never
 * let it through (clear it), whatever roles they hold, as an initiator never approves their own transfer.
 */
function refuseSelfClear(transfer: Transfer, actor: EvidenceActor): void {
  const member = actor.type === 'system' ? undefined : actor.member;
  if (member === undefined || transfer.createdBy !== member) return;
  throw new AppError({
    status: 403,
    code: 'self_review_forbidden',
    title: 'Forbidden',
    detail: `Member ${member} created transfer ${transfer.id}; another member must clear its review.`,
  });
}

/**
 * A transfer held for review, once its case is decided: cleared, it goes back on the way it was going (or to
 * approval, when its policy asked for one too); rejected, it is rejected and its hold released.
 */
export const decideReviewedTransfer: ReviewSubjects['transfer'] = async (
  tx,
  deps,
  organizationId,
  transferId,
  decision,
  actor,
) => {
  const transfer = await lockTransfer(tx, organizationId, transferId);
  if (decision === 'reject') {
    return applyStatusChange(tx, deps, transfer, {
      to: 'rejected',
      failureCode: 'compliance_rejected',
      reason: REVIEW_REJECTED_STATUS_REASON,
    });
  }
  refuseSelfClear(transfer, actor);
  // Its policy asked for approval too: it waits for that next, its funds still held.
  if (transfer.authorization?.decision === 'require_approval')
    return awaitApprovalAfterReview(tx, deps, transfer);
  // Back on the way it was going: a payout waits for the rail; an internal transfer, or money a rail already
  // delivered, settles at once.
  const settlesNow = transfer.rail === 'internal' || transfer.direction === 'inbound';
  const pending = await applyStatusChange(tx, deps, transfer, {
    to: 'pending',
    nextRailCheckAt: settlesNow ? null : deps.now(),
  });
  return settlesNow && pending.status === 'pending'
    ? applyStatusChange(tx, deps, pending, { to: 'settled' })
    : pending;
};
