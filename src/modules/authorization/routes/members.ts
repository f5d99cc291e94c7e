/** The organization's members: listed, added, read, their roles changed (governed) and removed. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { MEMBER_ROLES, MEMBER_STATUSES, type MemberRole, type MemberStatus } from '../../../domain/access.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { enumFilter, foundById, listAndRetrieveRoutes, pagedList } from '../../../http/readRoutes.ts';
import { actOnId, changeById, makeFromBody } from '../../../http/routeEffects.ts';
import { accessByScope } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idParamsSchema } from '../../../http/schemas.ts';
import { writeRoute, writtenById } from '../../../http/writeRoutes.ts';
import { addMember, getMember, listMembers, removeMember, updateMember } from '../useCases/members.ts';
import { governedWriteRoute, proposedChangeOfId, proposedCreation, writtenOrPending } from './changes.ts';
import { presentMember } from './presenters.ts';
import { memberCreateBodySchema, memberUpdateBodySchema } from './schemas.ts';

const ACCESS = accessByScope(['Members']);
const memberParams = idParamsSchema(ID_PREFIXES.member, 'Member id.');

function memberReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/members',
    access: ACCESS.admin,
    present: presentMember,
    list: {
      operationId: 'listMembers',
      summary: 'List members',
      description: 'Newest first.',
      ...pagedList('Member', 'A page of members.', ID_PREFIXES.member, {
        status: enumFilter(MEMBER_STATUSES, 'Only members in this status.'),
        role: enumFilter(MEMBER_ROLES, 'Only members holding this role.'),
      }),
    },
    page: listMembers,
    filtersOf: ({ status, role }: { status?: MemberStatus; role?: MemberRole }) => ({ status, role }),
    retrieve: {
      operationId: 'getMember',
      summary: 'Retrieve a member',
      ...foundById(memberParams, 'Member', 'The member.'),
    },
    get: getMember,
  });
}

/** Adding a member grants roles: a governed change (`role_grant`) where the policy asks for approval. */
function createMemberRoute(app: FastifyInstance, deps: Deps): void {
  governedWriteRoute<{ Body: { email: string; roles: string[]; name?: string } }>(
    app,
    deps,
    'POST',
    '/v1/members',
    201,
    proposedCreation('role_grant', 'add'),
    makeFromBody(deps, addMember, presentMember),
    {
      ...ACCESS.admin,
      operationId: 'createMember',
      summary: 'Add a member',
      description:
        'Adds a person by email with their roles. An email that is already a member is a 409 `member_exists`; a removed member is restored with the roles given. Recorded as evidence.',
      body: memberCreateBodySchema,
      responses: writtenOrPending(201, 'Member', 'The member.'),
    },
  );
}

/** A role change is a governed change (`role_grant`) where the policy asks for approval. */
function updateMemberRoute(app: FastifyInstance, deps: Deps): void {
  governedWriteRoute<{ Params: { id: string }; Body: { roles?: string[]; name?: string } }>(
    app,
    deps,
    'PATCH',
    '/v1/members/:id',
    200,
    proposedChangeOfId('role_grant', 'update'),
    changeById(deps, updateMember, presentMember),
    {
      ...ACCESS.admin,
      operationId: 'updateMember',
      summary: 'Change a member’s roles or name',
      description:
        'Keys acting for the member follow at once in the process that made the change and within 5 seconds elsewhere. A role change is recorded as evidence.',
      params: memberParams,
      body: memberUpdateBodySchema,
      responses: writtenOrPending(200, 'Member', 'The member.'),
    },
  );
}

function removeMemberRoute(app: FastifyInstance, deps: Deps): void {
  writeRoute<{ Params: { id: string } }>(
    app,
    deps,
    'DELETE',
    '/v1/members/:id',
    200,
    actOnId(deps, removeMember, presentMember),
    {
      ...ACCESS.admin,
      operationId: 'removeMember',
      summary: 'Remove a member',
      description:
        'The member’s keys stop working (401 `api_key_revoked`); their votes and everything they did stay on record. Removing a removed member changes nothing.',
      ...writtenById(memberParams, 'Member', 'The member, removed.'),
    },
  );
}

/** The organization's people and their signer roles: the `admin` scope only. */
export const memberRoutes = routesInOrder(
  memberReadRoutes,
  createMemberRoute,
  updateMemberRoute,
  removeMemberRoute,
);
