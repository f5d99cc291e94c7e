import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { addMember, getMember, listMembers, removeMember, updateMember } from '../../app/members.ts';
import { MEMBER_ROLES, MEMBER_STATUSES, type MemberRole, type MemberStatus } from '../../domain/access.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { presentMember } from '../authorizationPresenters.ts';
import { memberCreateBodySchema, memberUpdateBodySchema } from '../authorizationSchemas.ts';
import type { ListQuery } from '../presenters.ts';
import { pagedList, retrieveByIdRoute } from '../readRoutes.ts';
import { actOnId, changeById, makeFromBody } from '../routeEffects.ts';
import {
  found,
  idempotentWrite,
  readOperation,
  retrieveFilteredPage,
  writeOperation,
  written,
} from '../routeKit.ts';
import { idParamsSchema } from '../schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedChangeOfId,
  proposedCreation,
} from './changes.ts';

const TAGS = ['Members'];
const memberParams = idParamsSchema(ID_PREFIXES.member, 'Member id.');

function listMembersRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: MemberStatus; role?: MemberRole } }>(
    '/v1/members',
    readOperation({
      scope: 'admin',
      operationId: 'listMembers',
      summary: 'List members',
      description: 'Newest first.',
      tags: TAGS,
      ...pagedList('Member', 'A page of members.', ID_PREFIXES.member, {
        status: { type: 'string', enum: MEMBER_STATUSES, description: 'Only members in this status.' },
        role: { type: 'string', enum: MEMBER_ROLES, description: 'Only members holding this role.' },
      }),
    }),
    retrieveFilteredPage(deps, listMembers, ({ status, role }) => ({ status, role }), presentMember),
  );
}

/** Adding a member grants roles: a governed change (`role_grant`) where the policy asks for approval. */
function createMemberRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { email: string; roles: string[]; name?: string } }>(
    '/v1/members',
    writeOperation({
      scope: 'admin',
      operationId: 'createMember',
      summary: 'Add a member',
      description:
        'Adds a person by email with their roles. An email that is already a member is a 409 `member_exists`; a removed member is restored with the roles given. Recorded as evidence.',
      tags: TAGS,
      body: memberCreateBodySchema,
      responses: { 201: written('Member', 'The member.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      201,
      proposedCreation('role_grant', 'add'),
      makeFromBody(deps, addMember, presentMember),
    ),
  );
}

function getMemberRoute(app: FastifyInstance, deps: Deps): void {
  retrieveByIdRoute(app, deps, '/v1/members/:id', getMember, presentMember, {
    scope: 'admin',
    operationId: 'getMember',
    summary: 'Retrieve a member',
    tags: TAGS,
    params: memberParams,
    responses: { 200: found('Member', 'The member.') },
  });
}

/** A role change is a governed change (`role_grant`) where the policy asks for approval. */
function updateMemberRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: { roles?: string[]; name?: string } }>(
    '/v1/members/:id',
    writeOperation({
      scope: 'admin',
      operationId: 'updateMember',
      summary: 'Change a member’s roles or name',
      description:
        'Keys acting for the member follow at once in the process that made the change and within 5 seconds elsewhere. A role change is recorded as evidence.',
      tags: TAGS,
      params: memberParams,
      body: memberUpdateBodySchema,
      responses: { 200: written('Member', 'The member.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      200,
      proposedChangeOfId('role_grant', 'update'),
      changeById(deps, updateMember, presentMember),
    ),
  );
}

function removeMemberRoute(app: FastifyInstance, deps: Deps): void {
  app.delete<{ Params: { id: string } }>(
    '/v1/members/:id',
    writeOperation({
      scope: 'admin',
      operationId: 'removeMember',
      summary: 'Remove a member',
      description:
        'The member’s keys stop working (401 `api_key_revoked`); their votes and everything they did stay on record. Removing a removed member changes nothing.',
      tags: TAGS,
      params: memberParams,
      responses: { 200: written('Member', 'The member, removed.') },
    }),
    idempotentWrite(deps, 200, actOnId(deps, removeMember, presentMember)),
  );
}

/** The organization's people and their signer roles: the `admin` scope only. */
export function memberRoutes(app: FastifyInstance, deps: Deps): void {
  listMembersRoute(app, deps);
  createMemberRoute(app, deps);
  getMemberRoute(app, deps);
  updateMemberRoute(app, deps);
  removeMemberRoute(app, deps);
}
