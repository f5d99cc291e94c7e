/**
 * Rail partners (admins): which partner carries a rail for the organization, with its settings and
 * write-only credentials; and the callbacks partners sent (operators), stored as they arrived.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import {
  enumFilter,
  foundById,
  listAndRetrieveRoutes,
  listRoute,
  pagedList,
} from '../../../http/readRoutes.ts';
import { changeById, makeFromBody } from '../../../http/routeEffects.ts';
import { writeOperation, written } from '../../../http/routeKit.ts';
import { routesInOrder } from '../../../http/routeOrder.ts';
import { idSchema } from '../../../http/schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedChangeOfId,
  proposedCreation,
} from '../../authorization/index.ts';
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
import { ACCESS, railPartnerParams } from './schemas.ts';

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
    processed_at: isoOrNull(c.processedAt),
  };
}

function createRailPartnerRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ConfigureRailPartnerInput }>(
    '/v1/rail-partners',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'createRailPartner',
      summary: 'Configure a rail partner',
      description:
        'Names the partner that carries a rail (and network) for the organization, with its settings and credentials. The credentials are sealed at rest with the master key and never shown again. One active partner per rail and network: another is a 409 `rail_partner_exists`. The change is recorded as evidence (`rail_partner.update`), naming the fields set, never their values.',
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
    governedIdempotentWrite(
      deps,
      201,
      proposedCreation('rail_partner', 'create'),
      makeFromBody(deps, configureRailPartner, (config) => presentRailPartner(deps, config)),
    ),
  );
}

function railPartnersReadRoutes(app: FastifyInstance, deps: Deps): void {
  listAndRetrieveRoutes(app, deps, {
    path: '/v1/rail-partners',
    access: ACCESS.admin,
    present: (config: RailPartnerConfig) => presentRailPartner(deps, config),
    list: {
      operationId: 'listRailPartners',
      summary: 'List rail partners',
      description: 'Newest first, active and disabled.',
      ...pagedList('RailPartner', 'A page of rail partner configurations.', ID_PREFIXES.railPartner),
    },
    page: listRailPartners,
    retrieve: {
      operationId: 'getRailPartner',
      summary: 'Retrieve a rail partner',
      ...foundById(railPartnerParams, 'RailPartner', 'The configuration.'),
    },
    get: getRailPartner,
  });
}

/** An update names the partner configuration in its path and the changes in its body. */
type UpdateRoute = { Params: { id: string }; Body: UpdateRailPartnerInput };

function updateRailPartnerRoute(app: FastifyInstance, deps: Deps): void {
  app.patch<UpdateRoute>(
    '/v1/rail-partners/:id',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'updateRailPartner',
      summary: 'Update a rail partner',
      description:
        'Changes settings, rotates credentials (those given replace their namesakes; the rest are kept), or disables (`status: disabled`) or re-activates it. A disabled partner carries no new payouts (they fail `rail_not_configured`) but its callback address still takes late callbacks.',
      params: railPartnerParams,
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
    governedIdempotentWrite<UpdateRoute>(
      deps,
      200,
      proposedChangeOfId('rail_partner', 'update'),
      changeById(deps, updateRailPartner, (config) => presentRailPartner(deps, config)),
    ),
  );
}

function listRailCallbacksRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/rail-callbacks',
    access: ACCESS.compliance,
    present: presentRailCallback,
    list: {
      operationId: 'listRailCallbacks',
      summary: 'List partner callbacks',
      description:
        'Newest first: every callback partners sent to the organization’s callback addresses, as it arrived, with what applying it made of it. For operators (the `compliance` scope).',
      ...pagedList('RailCallback', 'A page of callbacks.', ID_PREFIXES.railCallback, {
        status: enumFilter(RAIL_CALLBACK_STATUSES, 'Only callbacks in this status.'),
        transfer: idSchema(ID_PREFIXES.transfer, 'Only callbacks applied to this transfer.'),
      }),
    },
    page: listOrganizationRailCallbacks,
    filtersOf: (query: { status?: RailCallbackStatus; transfer?: string }) => ({
      status: query.status,
      transferId: query.transfer,
    }),
  });
}

export const railPartnerRoutes = routesInOrder(
  createRailPartnerRoute,
  railPartnersReadRoutes,
  updateRailPartnerRoute,
  listRailCallbacksRoute,
);
