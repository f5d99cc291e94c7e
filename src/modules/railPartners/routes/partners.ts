/**
 * Rail partners (admins): which partner carries a rail for the organization, with its settings and
 * write-only credentials; and the callbacks partners sent (operators), stored as they arrived.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { Deps, Queryable } from '../../../app/deps.ts';
import type { ChangeRequest } from '../../../app/governedChanges.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActor } from '../../../http/auth.ts';
import type { ListQuery } from '../../../http/presenters.ts';
import {
  found,
  LIST_PROBLEMS,
  readOperation,
  retrieveById,
  retrieveFilteredPage,
  retrievePage,
  writeOperation,
  written,
} from '../../../http/routeKit.ts';
import { governedWrite, pendingChangeResponse } from '../../../http/routes/changes.ts';
import { idParamsSchema, idSchema, listEnvelopeSchema, listQuerySchema } from '../../../http/schemas.ts';
import { sendWrite } from '../../../http/writes.ts';
import {
  RAIL_CALLBACK_STATUSES,
  RAIL_PARTNER_FIELD_LENGTH_MAX,
  RAIL_PARTNER_STATUSES,
  RAIL_PARTNERS,
  type RailCallbackStatus,
  type RailPartnerConfig,
} from '../domain.ts';
import type { RailCallback } from '../useCases/callbacks.ts';
import { listOrganizationRailCallbacks } from '../useCases/callbacks.ts';
import {
  type ConfigureRailPartnerInput,
  callbackBaseUrl,
  configureRailPartner,
  getRailPartner,
  listRailPartners,
  type UpdateRailPartnerInput,
  updateRailPartner,
} from '../useCases/partners.ts';
import { TAGS } from './schemas.ts';

const partnerParams = idParamsSchema(ID_PREFIXES.railPartner, 'Rail partner id.');

const fieldsSchema = (description: string) => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string', minLength: 1, maxLength: RAIL_PARTNER_FIELD_LENGTH_MAX },
});

function presentRailPartner(deps: Deps, config: RailPartnerConfig) {
  return {
    object: 'rail_partner',
    id: config.id,
    partner: config.partner,
    rail: config.rail,
    network: config.network,
    status: config.status,
    settings: config.settings,
    credentials: config.credentialNames,
    callback_url: callbackBaseUrl(deps, config),
    created_at: config.createdAt.toISOString(),
    updated_at: config.updatedAt.toISOString(),
  };
}

function presentRailCallback(c: RailCallback) {
  return {
    object: 'rail_callback',
    id: c.id,
    rail_partner: c.configId,
    partner: c.partner,
    path: c.path,
    status: c.status,
    transfer: c.transferId,
    detail: c.detail,
    body: c.rawBody,
    received_at: c.receivedAt.toISOString(),
    processed_at: c.processedAt?.toISOString() ?? null,
  };
}

/**
 * The handler of an idempotent write of a partner's configuration, a governed setting: proposed for
 * approval when the policy asks (202 with the change), else `write` runs now and the configuration is
 * answered with `status`.
 */
function governedPartnerWrite<Route extends RouteGenericInterface>(
  deps: Deps,
  status: number,
  changeOf: (request: FastifyRequest<Route>) => ChangeRequest,
  write: (
    tx: Queryable,
    organizationId: string,
    request: FastifyRequest<Route>,
  ) => Promise<RailPartnerConfig>,
) {
  return (request: FastifyRequest<Route>, reply: FastifyReply): Promise<FastifyReply> =>
    sendWrite(deps, request, reply, async (tx, organizationId) =>
      governedWrite(tx, deps, organizationId, request, changeOf(request), async () => ({
        status,
        body: presentRailPartner(deps, await write(tx, organizationId, request)),
      })),
    );
}

function createRailPartnerRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ConfigureRailPartnerInput }>(
    '/v1/rail-partners',
    writeOperation({
      scope: 'admin',
      operationId: 'createRailPartner',
      summary: 'Configure a rail partner',
      description:
        'Names the partner that carries a rail (and network) for the organization, with its settings and credentials. The credentials are sealed at rest with the master key and never shown again. One active partner per rail and network: another is a 409 `rail_partner_exists`. The change is recorded as evidence (`rail_partner.update`), naming the fields set, never their values.',
      tags: TAGS,
      body: {
        type: 'object',
        required: ['partner', 'settings', 'credentials'],
        additionalProperties: false,
        properties: {
          partner: { type: 'string', enum: RAIL_PARTNERS },
          settings: fieldsSchema('The partner’s settings (shown back).'),
          credentials: fieldsSchema('The partner’s secrets (write-only).'),
        },
      },
      responses: { 201: written('RailPartner', 'The configuration.'), 202: pendingChangeResponse },
    }),
    governedPartnerWrite(
      deps,
      201,
      (request) => ({ kind: 'rail_partner', action: 'create', targetId: null, payload: request.body }),
      (tx, organizationId, request) =>
        configureRailPartner(tx, deps, organizationId, request.body, requestActor(request)),
    ),
  );
}

function listRailPartnersRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery }>(
    '/v1/rail-partners',
    readOperation({
      scope: 'admin',
      operationId: 'listRailPartners',
      summary: 'List rail partners',
      description: 'Newest first, active and disabled.',
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.railPartner),
      responses: { 200: listEnvelopeSchema('RailPartner', 'A page of rail partner configurations.') },
      problems: LIST_PROBLEMS,
    }),
    retrievePage(deps, listRailPartners, (config) => presentRailPartner(deps, config)),
  );
}

function getRailPartnerRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Params: { id: string } }>(
    '/v1/rail-partners/:id',
    readOperation({
      scope: 'admin',
      operationId: 'getRailPartner',
      summary: 'Retrieve a rail partner',
      tags: TAGS,
      params: partnerParams,
      responses: { 200: found('RailPartner', 'The configuration.') },
    }),
    retrieveById(deps, getRailPartner, (config) => presentRailPartner(deps, config)),
  );
}

function updateRailPartnerRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<{ Params: { id: string }; Body: UpdateRailPartnerInput }>(
    '/v1/rail-partners/:id',
    writeOperation({
      scope: 'admin',
      operationId: 'updateRailPartner',
      summary: 'Update a rail partner',
      description:
        'Changes settings, rotates credentials (those given replace their namesakes; the rest are kept), or disables (`status: disabled`) or re-activates it. A disabled partner carries no new payouts (they fail `rail_not_configured`) but its callback address still takes late callbacks.',
      tags: TAGS,
      params: partnerParams,
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          settings: fieldsSchema('Settings to change.'),
          credentials: fieldsSchema('Credentials to replace (write-only).'),
          status: { type: 'string', enum: RAIL_PARTNER_STATUSES },
        },
      },
      responses: { 200: written('RailPartner', 'The configuration.'), 202: pendingChangeResponse },
    }),
    governedPartnerWrite(
      deps,
      200,
      (request) => ({
        kind: 'rail_partner',
        action: 'update',
        targetId: request.params.id,
        payload: request.body,
      }),
      (tx, organizationId, request) =>
        updateRailPartner(tx, deps, organizationId, request.params.id, request.body, requestActor(request)),
    ),
  );
}

function listRailCallbacksRoute(app: FastifyInstance, deps: Deps): void {
  app.get<{ Querystring: ListQuery & { status?: RailCallbackStatus; transfer?: string } }>(
    '/v1/rail-callbacks',
    readOperation({
      scope: 'compliance',
      operationId: 'listRailCallbacks',
      summary: 'List partner callbacks',
      description:
        'Newest first: every callback partners sent to the organization’s callback addresses, as it arrived, with what applying it made of it. For operators (the `compliance` scope).',
      tags: TAGS,
      querystring: listQuerySchema(ID_PREFIXES.railCallback, {
        status: {
          type: 'string',
          enum: RAIL_CALLBACK_STATUSES,
          description: 'Only callbacks in this status.',
        },
        transfer: idSchema(ID_PREFIXES.transfer, 'Only callbacks applied to this transfer.'),
      }),
      responses: { 200: listEnvelopeSchema('RailCallback', 'A page of callbacks.') },
      problems: LIST_PROBLEMS,
    }),
    retrieveFilteredPage(
      deps,
      listOrganizationRailCallbacks,
      (query: { status?: RailCallbackStatus; transfer?: string }) => ({
        status: query.status,
        transferId: query.transfer,
      }),
      presentRailCallback,
    ),
  );
}

export function railPartnerRoutes(app: FastifyInstance, deps: Deps): void {
  createRailPartnerRoute(app, deps);
  listRailPartnersRoute(app, deps);
  getRailPartnerRoute(app, deps);
  updateRailPartnerRoute(app, deps);
  listRailCallbacksRoute(app, deps);
}
