/** Approvals: listed and read, and the votes that approve or reject them. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { MEMBER_ROLES, type MemberRole } from '../../../domain/access.ts';
import {
  APPROVAL_COMMENT_CHARS_MAX,
  APPROVAL_RESOURCE_TYPES,
  APPROVAL_STATUSES,
  type ApprovalResourceType,
  type ApprovalStatus,
  VOTE_DECISIONS,
  type VoteDecision,
} from '../../../domain/approvals.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { principalOf, requestActor } from '../../../http/auth.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { accessByScope, closedObjectSchema } from '../../../http/routeKit.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { getApproval, listApprovals, voteOnApproval, voterOf } from '../useCases/approvals.ts';
import { presentApproval } from './presenters.ts';

const ACCESS = accessByScope(['Approvals']);
const approvalParams = idParamsSchema(ID_PREFIXES.approval, 'Approval id.');

/** The calling member as a voter: the key must act for a member (403 `member_required`). */
function callerAsVoter(request: FastifyRequest) {
  const principal = principalOf(request);
  return voterOf(principal.member, principal.keyId);
}

/** An approval list's own filters, as the query names them. */
type ApprovalQuery = {
  status?: ApprovalStatus;
  resource_type?: ApprovalResourceType;
  resource?: string;
  can_act?: boolean;
};

function approvalReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/approvals',
    access: ACCESS.read,
    present: presentApproval,
    list: {
      operationId: 'listApprovals',
      summary: 'List approvals',
      description:
        'Newest first. `status=pending` is the queue; `can_act=true` keeps the pending approvals the calling member may vote on now (the key must act for a member).',
      ...pagedList('Approval', 'A page of approvals.', ID_PREFIXES.approval, {
        status: enumFilter(APPROVAL_STATUSES, 'Only approvals in this status.'),
        resource_type: enumFilter(APPROVAL_RESOURCE_TYPES, 'Only approvals of this kind of resource.'),
        resource: {
          type: 'string',
          maxLength: 64,
          description: 'Only the approvals of this resource (a transfer id, a policy change id).',
        },
        can_act: { type: 'boolean', description: 'Only approvals the calling member may vote on now.' },
      }),
    },
    page: listApprovals,
    filtersOf: ({ status, resource_type, resource, can_act }: ApprovalQuery, request) => ({
      status,
      resourceType: resource_type,
      resourceId: resource,
      canActAs: can_act === true ? callerAsVoter(request) : undefined,
    }),
    retrieve: {
      operationId: 'getApproval',
      summary: 'Retrieve an approval',
      ...foundById(approvalParams, 'Approval', 'The approval with its votes.'),
    },
    get: getApproval,
  });
}

const VOTE_WORDS: Record<VoteDecision, { operationId: string; summary: string; description: string }> = {
  approve: {
    operationId: 'approveApproval',
    summary: 'Approve',
    description:
      'Casts the calling member’s approving vote. The key must act for a member (403 `member_required`) holding a role the rule names (403 `approval_role_required`); the initiator cannot vote (403 `self_approval_forbidden`); a member votes once (409 `already_voted`); a decided or expired approval is a 409 `invalid_state_transition`. The vote that completes the quorum approves it: a transfer goes on to its rail (an internal one settles).',
  },
  reject: {
    operationId: 'rejectApproval',
    summary: 'Reject',
    description:
      'Casts the calling member’s rejecting vote, under the same rules as approving. One rejection rejects the approval: a transfer is `rejected` and its hold released; a policy change is not applied.',
  },
};

const voteBodySchema = closedObjectSchema({
  comment: {
    type: 'string',
    minLength: 1,
    maxLength: APPROVAL_COMMENT_CHARS_MAX,
    description: 'Why; kept with the vote and in the evidence.',
  },
  role: {
    type: 'string',
    enum: MEMBER_ROLES,
    description:
      'The role the vote counts for, when the member holds several that the rule names (by default one the approving votes lack).',
  },
});

function voteRoute(app: FastifyInstance, deps: Deps, decision: VoteDecision): void {
  writeRoute<{ Params: { id: string }; Body: { comment?: string; role?: MemberRole } }>(
    app,
    deps,
    'POST',
    `/v1/approvals/:id/${decision}`,
    200,
    async (tx, organizationId, request) =>
      presentApproval(
        await voteOnApproval(
          tx,
          deps,
          organizationId,
          request.params.id,
          decision,
          { comment: request.body?.comment, role: request.body?.role },
          callerAsVoter(request),
          requestActor(request),
        ),
      ),
    {
      ...ACCESS.read,
      ...VOTE_WORDS[decision],
      body: voteBodySchema,
      ...writtenById(approvalParams, 'Approval', 'The approval after the vote.'),
    },
  );
}

/** Approvals: anyone in the organization reads them; members with a role the rule names vote. */
export function approvalRoutes(app: FastifyInstance, deps: Deps): void {
  approvalReadRoutes(app, deps);
  for (const decision of VOTE_DECISIONS) voteRoute(app, deps, decision);
}
