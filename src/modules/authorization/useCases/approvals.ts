/**
 * Approvals as a resource: opened by a policy's `require_approval`, voted on by members, decided once.
 * Every vote, cancel and expiry locks the approval's resource first (the transfer, the policy change, the
 * payment batch, the loan or the governed change) and
 * the approval second, so two votes, a vote and an expiry, or a vote and a cancel never both decide it. The
 * decision moves the resource on in the same transaction: an approved transfer goes to the rail (or settles,
 * when internal), a rejected or expired one gives its hold back. How each resource type is locked and moved
 * on is its own use case's `ApprovableResource`, handed in through `deps.approvableResources` by the
 * composition root, so this file imports none of them.
 */

import type { PrincipalMember } from '../../../app/apiKeyAuthentication.ts';
import type { Deps, LockedResource } from '../../../app/deps.ts';
import { newEvent, recordEvents } from '../../../app/events.ts';
import { appendEvidence, SYSTEM_ACTOR } from '../../../app/evidence.ts';
import { getById } from '../../../app/reads.ts';
import type { MemberRole } from '../../../domain/access.ts';
import {
  type Approval,
  type ApprovalResourceType,
  type ApprovalStatus,
  canAct,
  isPastExpiry,
  statusAfterVote,
  type VoteDecision,
  type Voter,
  voteRefusal,
  voteRole,
} from '../../../domain/approvals.ts';
import type { PolicyDecision } from '../../../domain/decisions/policies.ts';
import { AppError, resourceMissing } from '../../../domain/errors.ts';
import type { EventRecord } from '../../../domain/events.ts';
import type { EvidenceActor, EvidenceDraft } from '../../../domain/evidence.ts';
import { type Page, type PageRequest, toPage } from '../../../domain/pagination.ts';
import type { Queryable } from '../../../store/store.ts';
import {
  type ApprovalFilter,
  findApproval,
  findExpiredApprovals,
  findPendingApprovalOf,
  insertApprovals,
  insertVote,
  listApprovals as listApprovalRows,
  saveApprovalStatus,
} from '../repository/approvals.ts';

/** Expired approvals one pass of the expiry worker decides at most. */
export const APPROVAL_EXPIRY_BATCH_MAX = 100;
/** How often the expiry worker looks: an approval expires at most this long after its time. */
export const APPROVAL_EXPIRY_INTERVAL_MS = 1_000;

/** The `data` of an `approval.updated` event: the approval as it stands, with its votes. */
export function approvalEventData(approval: Approval): Record<string, unknown> {
  return {
    approval_id: approval.id,
    status: approval.status,
    resource: { type: approval.resourceType, id: approval.resourceId },
    policy_version: approval.policyVersion,
    rule: approval.rule,
    quorum: { required: approval.quorum, roles: approval.roles, distinct_roles: approval.distinctRoles },
    votes: approval.votes.map((v) => ({
      member: v.memberId,
      email: v.email,
      role: v.role,
      decision: v.decision,
      comment: v.comment,
      created_at: v.createdAt.toISOString(),
    })),
    initiated_by: approval.initiatedBy,
    expires_at: approval.expiresAt.toISOString(),
    decided_at: approval.decidedAt?.toISOString() ?? null,
  };
}

export function approvalEvent(deps: Deps, approval: Approval, now: Date): EventRecord {
  return newEvent(
    deps,
    {
      organizationId: approval.organizationId,
      type: 'approval.updated',
      resourceId: approval.id,
      data: approvalEventData(approval),
    },
    now,
  );
}

/** A new pending approval for a resource, as a policy decision asked for it. */
export function newApproval(
  deps: Deps,
  input: {
    organizationId: string;
    resourceType: ApprovalResourceType;
    resourceId: string;
    decision: PolicyDecision;
    initiatedBy: string;
    now: Date;
  },
): Approval {
  const requirement = input.decision.approval;
  if (!requirement) throw new Error('an approval needs a require_approval decision');
  return {
    id: deps.newId('approval'),
    organizationId: input.organizationId,
    resourceType: input.resourceType,
    resourceId: input.resourceId,
    status: 'pending',
    policyVersion: input.decision.policyVersion,
    rule: input.decision.rule,
    quorum: requirement.quorum,
    roles: requirement.roles,
    distinctRoles: requirement.distinctRoles,
    initiatedBy: input.initiatedBy,
    expiresAt: new Date(input.now.getTime() + requirement.expiresInSeconds * 1_000),
    createdAt: input.now,
    decidedAt: null,
    votes: [],
  };
}

/** Opens approvals outside the ledger writer (a cleared review, a policy change), with their events. */
export async function openApproval(tx: Queryable, deps: Deps, approval: Approval): Promise<void> {
  await insertApprovals(tx, [approval]);
  await recordEvents(tx, deps, [approvalEvent(deps, approval, approval.createdAt)]);
}

export const getApproval = getById<Approval>(findApproval, 'approval');

/** The most rows a `can_act` listing reads to fill one page (the filter runs after the read). */
export const APPROVAL_CAN_ACT_SCAN_ROWS_MAX = 1_000;

export async function listApprovals(
  deps: Deps,
  organizationId: string,
  request: PageRequest & Omit<ApprovalFilter, keyof PageRequest> & { canActAs?: Voter | undefined },
): Promise<Page<Approval>> {
  const { canActAs, ...filter } = request;
  if (canActAs === undefined) {
    return toPage(
      await listApprovalRows(deps.store, organizationId, filter, request.limit + 1),
      request.limit,
    );
  }
  // Who may act is decided per approval by the domain, so the page is filled from pending rows.
  const now = deps.now();
  const rows = await listApprovalRows(
    deps.store,
    organizationId,
    { ...filter, status: 'pending' },
    APPROVAL_CAN_ACT_SCAN_ROWS_MAX,
  );
  return toPage(
    rows.filter((a) => canAct(a, canActAs, now)),
    request.limit,
  );
}

export function voterOf(member: PrincipalMember | null, apiKeyId: string): Voter {
  if (!member) {
    throw new AppError({
      status: 403,
      code: 'member_required',
      title: 'Forbidden',
      detail:
        'Votes are cast by people: use an API key that acts for a member (mkoba keys create --member EMAIL).',
    });
  }
  return { memberId: member.id, email: member.email, roles: member.roles, apiKeyId };
}

/** Locks an approval's resource, then the approval: the order every path that decides an approval takes. */
async function lockForDecision(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
): Promise<{ approval: Approval; resource: LockedResource }> {
  const found = await findApproval(tx, organizationId, id);
  if (!found) throw resourceMissing('approval', id);
  const resource = await deps.approvableResources[found.resourceType].lock(
    tx,
    organizationId,
    found.resourceId,
  );
  const approval = (await findApproval(tx, organizationId, id, { forUpdate: true })) as Approval;
  return { approval, resource };
}

function decisionEvidence(
  approval: Approval,
  actor: EvidenceActor,
  resourceStatus: string | null,
  transferId: string | undefined,
): EvidenceDraft {
  return {
    organizationId: approval.organizationId,
    kind: 'approval.decision',
    actor,
    transferId,
    data: {
      approval_id: approval.id,
      status: approval.status,
      resource_type: approval.resourceType,
      resource_id: approval.resourceId,
      policy_version: approval.policyVersion,
      rule: approval.rule,
      votes: approval.votes.map((v) => ({ member: v.memberId, role: v.role, decision: v.decision })),
      resource_status: resourceStatus,
    },
  };
}

export interface VoteInput {
  comment?: string | undefined;
  role?: MemberRole | undefined;
}

/** One member's vote, once; the vote that reaches the quorum (or rejects) decides the approval and its resource. */
export async function voteOnApproval(
  tx: Queryable,
  deps: Deps,
  organizationId: string,
  id: string,
  decision: VoteDecision,
  input: VoteInput,
  voter: Voter,
  actor: EvidenceActor,
): Promise<Approval> {
  const { approval, resource } = await lockForDecision(tx, deps, organizationId, id);
  const now = deps.now();
  const refusal = voteRefusal(approval, voter, now, input.role);
  if (refusal) throw refusal;
  const vote = {
    memberId: voter.memberId,
    email: voter.email,
    role: voteRole(approval, voter, input.role),
    decision,
    comment: input.comment ?? null,
    apiKeyId: voter.apiKeyId,
    createdAt: now,
  };
  await insertVote(tx, approval.id, vote);
  const voted: Approval = { ...approval, votes: [...approval.votes, vote] };
  const status: ApprovalStatus = statusAfterVote(voted);
  const evidence: EvidenceDraft[] = [
    {
      organizationId,
      kind: 'approval.vote',
      actor,
      transferId: resource.transferId,
      data: {
        approval_id: approval.id,
        member: vote.memberId,
        role: vote.role,
        decision,
        comment: vote.comment,
      },
    },
  ];
  let result = voted;
  if (status !== 'pending') {
    result = { ...voted, status, decidedAt: now };
    await saveApprovalStatus(tx, result);
    const resourceStatus = await resource.settle(tx, deps, result, actor);
    evidence.push(decisionEvidence(result, actor, resourceStatus, resource.transferId));
  }
  await appendEvidence(tx, deps, evidence);
  await recordEvents(tx, deps, [approvalEvent(deps, result, now)]);
  return result;
}

/**
 * Cancels the pending approval of a resource being canceled (a transfer, a payment batch, a loan, a governed
 * change; the caller holds the resource's lock), so a cancel and the last vote decide the resource one way
 * only. `now`, when given, is the instant the caller cancels the resource at, so both carry the same.
 */
export async function cancelApprovalOf(
  tx: Queryable,
  deps: Deps,
  resourceId: string,
  actor: EvidenceActor,
  now?: Date,
) {
  const approval = await findPendingApprovalOf(tx, resourceId);
  if (!approval) return;
  const decidedAt = now ?? deps.now();
  const canceled: Approval = { ...approval, status: 'canceled', decidedAt };
  await saveApprovalStatus(tx, canceled);
  await appendEvidence(tx, deps, [decisionEvidence(canceled, actor, 'canceled', undefined)]);
  await recordEvents(tx, deps, [approvalEvent(deps, canceled, decidedAt)]);
}

/**
 * One pass of the expiry worker: each pending approval past its time is expired in its own transaction,
 * after locking its resource and re-reading it (a vote that committed first wins; so does a cancel).
 */
export async function expireDueApprovals(deps: Deps, rowsMax = APPROVAL_EXPIRY_BATCH_MAX): Promise<number> {
  const due = await findExpiredApprovals(deps.store, deps.now(), rowsMax);
  let expired = 0;
  for (const { id, organizationId } of due) {
    const done = await deps.store.transaction(async (tx) => {
      const { approval, resource } = await lockForDecision(tx, deps, organizationId, id);
      const now = deps.now();
      if (!isPastExpiry(approval, now)) return false;
      const result: Approval = { ...approval, status: 'expired', decidedAt: now };
      await saveApprovalStatus(tx, result);
      const resourceStatus = await resource.settle(tx, deps, result, SYSTEM_ACTOR);
      await appendEvidence(tx, deps, [
        decisionEvidence(result, SYSTEM_ACTOR, resourceStatus, resource.transferId),
      ]);
      await recordEvents(tx, deps, [approvalEvent(deps, result, now)]);
      return true;
    });
    if (done) expired++;
  }
  return expired;
}
