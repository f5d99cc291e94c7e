/**
 * Approvals, pure: a pending approval collects one vote per member from the roles its rule names, and
 * reaches a decision once: the quorum approves it, one rejection rejects it, its expiry expires it, and
 * canceling its resource cancels it. Who may vote is decided here; the use case only loads and writes.
 */

import type { MemberRole } from './access.ts';
import { AppError } from './errors.ts';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired', 'canceled'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export const APPROVAL_RESOURCE_TYPES = [
  'transfer',
  'policy_change',
  'payment_batch',
  'loan',
  'change',
] as const;
export type ApprovalResourceType = (typeof APPROVAL_RESOURCE_TYPES)[number];

export const VOTE_DECISIONS = ['approve', 'reject'] as const;
export type VoteDecision = (typeof VOTE_DECISIONS)[number];

/** The status reason of a transfer waiting `pending_approval`. */
export const AWAITING_APPROVAL_STATUS_REASON = 'awaiting_approval';

/** The longest comment a vote carries. */
export const APPROVAL_COMMENT_CHARS_MAX = 1_000;

export interface ApprovalVote {
  memberId: string;
  email: string;
  role: MemberRole;
  decision: VoteDecision;
  comment: string | null;
  apiKeyId: string;
  createdAt: Date;
}

export interface Approval {
  id: string;
  organizationId: string;
  resourceType: ApprovalResourceType;
  resourceId: string;
  status: ApprovalStatus;
  policyVersion: number;
  rule: string;
  quorum: number;
  roles: MemberRole[];
  distinctRoles: boolean;
  initiatedBy: string;
  expiresAt: Date;
  createdAt: Date;
  decidedAt: Date | null;
  votes: ApprovalVote[];
}

/** The member casting a vote, as their key presents them. */
export interface Voter {
  memberId: string;
  email: string;
  roles: readonly MemberRole[];
  apiKeyId: string;
}

function forbidden(code: 'self_approval_forbidden' | 'approval_role_required', detail: string): AppError {
  return new AppError({ status: 403, code, title: 'Forbidden', detail });
}

function conflict(code: 'already_voted' | 'invalid_state_transition', detail: string): AppError {
  return new AppError({ status: 409, code, title: 'Conflict', detail });
}

/** True once a pending approval's time is up (the expiry worker may not have reached it yet). */
export function isPastExpiry(approval: Approval, now: Date): boolean {
  return approval.status === 'pending' && now.getTime() >= approval.expiresAt.getTime();
}

/** Whether `voter` could vote on `approval` now; the reason when not (a problem, never thrown here). */
export function voteRefusal(
  approval: Approval,
  voter: Voter,
  now: Date,
  role?: MemberRole,
): AppError | undefined {
  if (approval.status !== 'pending' || isPastExpiry(approval, now)) {
    const status = approval.status === 'pending' ? 'expired' : approval.status;
    return conflict(
      'invalid_state_transition',
      `Approval ${approval.id} is ${status}; it takes no more votes.`,
    );
  }
  if (voter.memberId === approval.initiatedBy) {
    return forbidden('self_approval_forbidden', 'The member who initiated this cannot vote on its approval.');
  }
  if (approval.votes.some((v) => v.memberId === voter.memberId)) {
    return conflict(
      'already_voted',
      `${voter.email} has already voted on approval ${approval.id}; a member counts once.`,
    );
  }
  const eligible = voter.roles.filter((r) => approval.roles.includes(r));
  if (eligible.length === 0 || (role !== undefined && !eligible.includes(role))) {
    return forbidden(
      'approval_role_required',
      `A vote on this approval needs one of the roles ${approval.roles.join(', ')}${role === undefined ? '' : ` (you asked to vote as ${role})`}; ${voter.email} holds ${voter.roles.join(', ')}.`,
    );
  }
  return undefined;
}

/**
 * The role a vote counts for: the one asked for, else a named role the approving votes lack (so a member
 * holding two roles helps a two-role quorum), else the first named role the member holds.
 */
export function voteRole(approval: Approval, voter: Voter, asked?: MemberRole): MemberRole {
  if (asked !== undefined) return asked;
  const eligible = voter.roles.filter((r) => approval.roles.includes(r));
  const represented = new Set(approval.votes.filter((v) => v.decision === 'approve').map((v) => v.role));
  return eligible.find((r) => !represented.has(r)) ?? (eligible[0] as MemberRole);
}

export function quorumReached(approval: Pick<Approval, 'quorum' | 'distinctRoles' | 'votes'>): boolean {
  const approving = approval.votes.filter((v) => v.decision === 'approve');
  if (approving.length < approval.quorum) return false;
  return !approval.distinctRoles || new Set(approving.map((v) => v.role)).size >= 2;
}

/** The status after a vote is added: rejected on any rejection, approved at quorum, else still pending. */
export function statusAfterVote(approval: Approval): ApprovalStatus {
  if (approval.votes.some((v) => v.decision === 'reject')) return 'rejected';
  return quorumReached(approval) ? 'approved' : 'pending';
}

/** Whether this member could act on the approval now (the `can_act` filter). */
export function canAct(approval: Approval, voter: Voter, now: Date): boolean {
  return voteRefusal(approval, voter, now) === undefined;
}
