import type { FastifyInstance } from 'fastify';
import { getApproval, listApprovals, voteOnApproval, voterOf } from '../../app/approvals.ts';
import type { Deps } from '../../app/deps.ts';
import {
  APPROVAL_COMMENT_CHARS_MAX,
  APPROVAL_RESOURCE_TYPES,
  APPROVAL_STATUSES,
  type ApprovalResourceType,
  type ApprovalStatus,
  VOTE_DECISIONS,
} from '../../domain/approvals.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { MEMBER_ROLES, type MemberRole } from '../../domain/members.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentApproval } from '../authorizationPresenters.ts';
import { type ListQuery, pageRequestOf, presentList } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  listEnvelopeSchema,
  listQuerySchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Approvals'];
const approvalParams = idParamsSchema(ID_PREFIXES.approval, 'Approval id.');

/** Approvals: anyone in the organization reads them; members with a role the rule names vote. */
export function approvalRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{
    Querystring: ListQuery & {
      status?: ApprovalStatus;
      resource_type?: ApprovalResourceType;
      resource?: string;
      can_act?: boolean;
    };
  }>(
    '/v1/approvals',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listApprovals',
        summary: 'List approvals',
        description:
          'Newest first. `status=pending` is the queue; `can_act=true` keeps the pending approvals the calling member may vote on now (the key must act for a member).',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.approval, {
          status: { type: 'string', enum: APPROVAL_STATUSES, description: 'Only approvals in this status.' },
          resource_type: {
            type: 'string',
            enum: APPROVAL_RESOURCE_TYPES,
            description: 'Only approvals of this kind of resource.',
          },
          resource: {
            type: 'string',
            maxLength: 64,
            description: 'Only the approvals of this resource (a transfer id, a policy change id).',
          },
          can_act: { type: 'boolean', description: 'Only approvals the calling member may vote on now.' },
        }),
        response: {
          200: listEnvelopeSchema('Approval', 'A page of approvals.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { status, resource_type, resource, can_act } = request.query;
      const page = await listApprovals(deps, principal.organizationId, {
        ...pageRequestOf(request.query),
        status,
        resourceType: resource_type,
        resourceId: resource,
        canActAs: can_act === true ? voterOf(principal.member, principal.keyId) : undefined,
      });
      return presentList(page, presentApproval);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/approvals/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getApproval',
        summary: 'Retrieve an approval',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: approvalParams,
        response: {
          200: { description: 'The approval with its votes.', $ref: 'Approval#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentApproval(await getApproval(deps, principalOf(request).organizationId, request.params.id)),
  );

  for (const decision of VOTE_DECISIONS) {
    app.post<{ Params: { id: string }; Body: { comment?: string; role?: MemberRole } }>(
      `/v1/approvals/:id/${decision}`,
      {
        config: { scope: 'read' },
        schema: {
          operationId: decision === 'approve' ? 'approveApproval' : 'rejectApproval',
          summary: decision === 'approve' ? 'Approve' : 'Reject',
          description:
            decision === 'approve'
              ? 'Casts the calling member’s approving vote. The key must act for a member (403 `member_required`) holding a role the rule names (403 `approval_role_required`); the initiator cannot vote (403 `self_approval_forbidden`); a member votes once (409 `already_voted`); a decided or expired approval is a 409 `invalid_state_transition`. The vote that completes the quorum approves it: a transfer goes on to its rail (an internal one settles).'
              : 'Casts the calling member’s rejecting vote, under the same rules as approving. One rejection rejects the approval: a transfer is `rejected` and its hold released; a policy change is not applied.',
          tags: TAGS,
          security: BEARER_SECURITY,
          headers: idempotencyHeadersSchema,
          params: approvalParams,
          body: {
            type: 'object',
            additionalProperties: false,
            properties: {
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
            },
          },
          response: {
            200: {
              description: 'The approval after the vote.',
              headers: idempotentWriteHeaders,
              $ref: 'Approval#',
            },
            ...problemResponses(...WRITE_PROBLEMS),
          },
        },
      },
      (request, reply) =>
        sendWrite(deps, request, reply, async (tx, organizationId) => {
          const principal = principalOf(request);
          return {
            status: 200,
            body: presentApproval(
              await voteOnApproval(
                tx,
                deps,
                organizationId,
                request.params.id,
                decision,
                { comment: request.body?.comment, role: request.body?.role },
                voterOf(principal.member, principal.keyId),
                requestActor(request),
              ),
            ),
          };
        }),
    );
  }
}
