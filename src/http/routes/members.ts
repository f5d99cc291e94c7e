import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { proposeIfGoverned } from '../../app/governedChanges.ts';
import { addMember, getMember, listMembers, removeMember, updateMember } from '../../app/members.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { MEMBER_ROLES, MEMBER_STATUSES, type MemberRole, type MemberStatus } from '../../domain/members.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../auth.ts';
import { presentMember } from '../authorizationPresenters.ts';
import { memberCreateBodySchema, memberUpdateBodySchema } from '../authorizationSchemas.ts';
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
import { pendingChangeReply, pendingChangeResponse } from './changes.ts';

const TAGS = ['Members'];
const memberParams = idParamsSchema(ID_PREFIXES.member, 'Member id.');

/** The organization's people and their signer roles: the `admin` scope only. */
export function memberRoutes(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: MemberStatus; role?: MemberRole } }>(
    '/v1/members',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'listMembers',
        summary: 'List members',
        description: 'Newest first.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.member, {
          status: { type: 'string', enum: MEMBER_STATUSES, description: 'Only members in this status.' },
          role: { type: 'string', enum: MEMBER_ROLES, description: 'Only members holding this role.' },
        }),
        response: {
          200: listEnvelopeSchema('Member', 'A page of members.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) => {
      const { status, role } = request.query;
      const page = await listMembers(deps, principalOf(request).organizationId, {
        ...pageRequestOf(request.query),
        status,
        role,
      });
      return presentList(page, presentMember);
    },
  );

  app.post<{ Body: { email: string; roles: string[]; name?: string } }>(
    '/v1/members',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'createMember',
        summary: 'Add a member',
        description:
          'Adds a person by email with their roles. An email that is already a member is a 409 `member_exists`; a removed member is restored with the roles given. Recorded as evidence.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        body: memberCreateBodySchema,
        response: {
          201: { description: 'The member.', headers: idempotentWriteHeaders, $ref: 'Member#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const pending = await proposeIfGoverned(
          tx,
          deps,
          organizationId,
          { kind: 'role_grant', action: 'add', targetId: null, payload: request.body },
          requestActor(request),
        );
        if (pending) return pendingChangeReply(pending);
        return {
          status: 201,
          body: presentMember(await addMember(tx, deps, organizationId, request.body, requestActor(request))),
        };
      }),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/members/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'getMember',
        summary: 'Retrieve a member',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: memberParams,
        response: {
          200: { description: 'The member.', $ref: 'Member#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentMember(await getMember(deps, principalOf(request).organizationId, request.params.id)),
  );

  app.patch<{ Params: { id: string }; Body: { roles?: string[]; name?: string } }>(
    '/v1/members/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateMember',
        summary: 'Change a member’s roles or name',
        description:
          'Keys acting for the member follow at once in the process that made the change and within 5 seconds elsewhere. A role change is recorded as evidence.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: memberParams,
        body: memberUpdateBodySchema,
        response: {
          200: { description: 'The member.', headers: idempotentWriteHeaders, $ref: 'Member#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => {
        const pending = await proposeIfGoverned(
          tx,
          deps,
          organizationId,
          { kind: 'role_grant', action: 'update', targetId: request.params.id, payload: request.body },
          requestActor(request),
        );
        if (pending) return pendingChangeReply(pending);
        return {
          status: 200,
          body: presentMember(
            await updateMember(
              tx,
              deps,
              organizationId,
              request.params.id,
              request.body,
              requestActor(request),
            ),
          ),
        };
      }),
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/members/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'removeMember',
        summary: 'Remove a member',
        description:
          'The member’s keys stop working (401 `api_key_revoked`); their votes and everything they did stay on record. Removing a removed member changes nothing.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
        params: memberParams,
        response: {
          200: { description: 'The member, removed.', headers: idempotentWriteHeaders, $ref: 'Member#' },
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) => ({
        status: 200,
        body: presentMember(
          await removeMember(tx, deps, organizationId, request.params.id, requestActor(request)),
        ),
      })),
  );
}
