import type { FastifyInstance } from 'fastify';
import { actorIdOf } from '../../app/apiKeys.ts';
import type { Deps } from '../../app/deps.ts';
import {
  getCurrentPolicy,
  getPolicyChange,
  getPolicyVersion,
  latestApprovalIdOfChange,
  listChanges,
  listVersions,
  type PolicyUpdateInput,
  updatePolicy,
} from '../../app/policies.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentPolicy, presentPolicyChange } from '../authorizationPresenters.ts';
import { policyBodySchema } from '../authorizationSchemas.ts';
import { type ListQuery, pageRequestOf } from '../presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../problems.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  listEnvelopeSchema,
  listQuerySchema,
  pageLimitSchema,
} from '../schemas.ts';
import { sendWrite } from '../writes.ts';

const TAGS = ['Policies'];

/** The authorization policy: read by any key, changed by admins (through an approval when it says so). */
export function policyRoutes(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/policies',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getPolicy',
        summary: 'Retrieve the current policy',
        description:
          'The organization’s authorization policy as it stands: ordered rules and a default. Before any change it is version 1: no rules, every transfer allowed.',
        tags: TAGS,
        security: BEARER_SECURITY,
        response: {
          200: { description: 'The current version.', $ref: 'Policy#' },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => presentPolicy(await getCurrentPolicy(deps, principalOf(request).organizationId)),
  );

  app.put<{ Body: PolicyUpdateInput }>(
    '/v1/policies',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updatePolicy',
        summary: 'Replace the policy',
        description:
          'Writes the rules and default as the next version (200, `policy.updated`). When the current policy has a `policy.update` rule that requires approval, the change waits instead (202, a `policy_change` with its approval) and is applied once approved; its proposer cannot approve it. A `deny` rule on `policy.update` is a 422 `policy_denied`. Each rule is checked field by field: a fault is a 400 naming it (`rules[2].approval.quorum`).',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: policyBodySchema,
        response: {
          200: { description: 'The new version.', headers: idempotentWriteHeaders, $ref: 'Policy#' },
          202: {
            description: 'The change, waiting for its approval.',
            headers: idempotentWriteHeaders,
            $ref: 'PolicyChange#',
          },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const result = await updatePolicy(
          tx,
          deps,
          organizationId,
          request.body,
          actorIdOf(principalOf(request)),
          requestActor(request),
        );
        return result.kind === 'applied'
          ? { status: 200, body: presentPolicy(result.policy) }
          : { status: 202, body: presentPolicyChange(result.change, result.approval.id) };
      }),
  );

  app.get<{ Querystring: { limit: number; before_version?: number } }>(
    '/v1/policies/versions',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPolicyVersions',
        summary: 'List policy versions',
        description: 'Newest first; page with `before_version` (the last version of the previous page).',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: pageLimitSchema('versions'),
            before_version: {
              type: 'integer',
              minimum: 1,
              description: 'Only versions below this one (the `next_cursor` of the previous page).',
            },
          },
        },
        response: {
          200: {
            description: 'A page of versions.',
            type: 'object',
            required: ['object', 'data', 'has_more', 'next_cursor'],
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'Policy#' } },
              has_more: { type: 'boolean' },
              next_cursor: {
                type: ['integer', 'null'],
                description: 'Pass as `before_version` for the next page.',
              },
            },
          },
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const page = await listVersions(deps, principalOf(request).organizationId, {
        limit: request.query.limit,
        beforeVersion: request.query.before_version,
      });
      const last = page.data.at(-1);
      return {
        object: 'list',
        data: page.data.map(presentPolicy),
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? last.version : null,
      };
    },
  );

  app.get<{ Params: { version: number } }>(
    '/v1/policies/versions/:version',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getPolicyVersion',
        summary: 'Retrieve a policy version',
        description: 'The version a decision names (`authorization.policy_version` on a transfer).',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: {
          type: 'object',
          required: ['version'],
          properties: { version: { type: 'integer', minimum: 1, description: 'The policy version.' } },
        },
        response: {
          200: { description: 'That version.', $ref: 'Policy#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentPolicy(
        await getPolicyVersion(deps, principalOf(request).organizationId, request.params.version),
      ),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/policy-changes',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'listPolicyChanges',
        summary: 'List proposed policy changes',
        description: 'Newest first: changes that needed approval, with what became of them.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.policyChange),
        response: {
          200: listEnvelopeSchema('PolicyChange', 'A page of policy changes.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const page = await listChanges(deps, organizationId, pageRequestOf(request.query));
      const data = [];
      for (const change of page.data) {
        data.push(
          presentPolicyChange(change, await latestApprovalIdOfChange(deps, organizationId, change.id)),
        );
      }
      const last = page.data.at(-1);
      return {
        object: 'list',
        data,
        has_more: page.hasMore,
        next_cursor: page.hasMore && last ? last.id : null,
      };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/policy-changes/:id',
    {
      config: { scope: 'read' },
      schema: {
        operationId: 'getPolicyChange',
        summary: 'Retrieve a proposed policy change',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: idParamsSchema(ID_PREFIXES.policyChange, 'Policy change id.'),
        response: {
          200: { description: 'The change.', $ref: 'PolicyChange#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      const change = await getPolicyChange(deps, organizationId, request.params.id);
      return presentPolicyChange(change, await latestApprovalIdOfChange(deps, organizationId, change.id));
    },
  );
}
