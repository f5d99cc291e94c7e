/**
 * Rail partners (admins): which partner carries a rail for the organization, with its settings and
 * write-only credentials; and the callbacks partners sent (operators), stored as they arrived.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { RAILS } from '../../../domain/transfers.ts';
import { BEARER_SECURITY, principalOf, requestActor } from '../../../http/auth.ts';
import { type ListQuery, pageRequestOf, presentList } from '../../../http/presenters.ts';
import { problemResponses, READ_PROBLEMS, WRITE_PROBLEMS } from '../../../http/problems.ts';
import { governedWrite, pendingChangeResponse } from '../../../http/routes/changes.ts';
import {
  idempotencyHeadersSchema,
  idempotentWriteHeaders,
  idParamsSchema,
  idSchema,
  listEnvelopeSchema,
  listQuerySchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import { sendWrite } from '../../../http/writes.ts';
import {
  RAIL_CALLBACK_STATUSES,
  RAIL_PARTNER_FIELD_LENGTH_MAX,
  RAIL_PARTNER_SHAPES,
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

const TAGS = ['Rail partners'];
const partnerParams = idParamsSchema(ID_PREFIXES.railPartner, 'Rail partner id.');

const fieldsSchema = (description: string) => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string', minLength: 1, maxLength: RAIL_PARTNER_FIELD_LENGTH_MAX },
});

const partnerFieldsDescription = Object.entries(RAIL_PARTNER_SHAPES)
  .map(
    ([name, shape]) =>
      `\`${name}\` (${shape.rail}${shape.network ? `, ${shape.network}` : ''}): settings ${shape.settings.map((s) => `\`${s}\``).join(', ')}; credentials ${shape.credentials.map((c) => `\`${c}\``).join(', ')}`,
  )
  .join('. ');

export const railPartnerSchema = {
  $id: 'RailPartner',
  type: 'object',
  description: `A partner that carries a rail (and mobile-money network) for the organization. ${partnerFieldsDescription}.`,
  required: [
    'object',
    'id',
    'partner',
    'rail',
    'network',
    'status',
    'settings',
    'credentials',
    'callback_url',
    'created_at',
    'updated_at',
  ],
  properties: {
    object: { type: 'string', enum: ['rail_partner'] },
    id: idSchema(ID_PREFIXES.railPartner, 'Rail partner id.'),
    partner: { type: 'string', enum: RAIL_PARTNERS },
    rail: { type: 'string', enum: RAILS },
    network: { type: ['string', 'null'] },
    status: { type: 'string', enum: RAIL_PARTNER_STATUSES },
    settings: { type: 'object', additionalProperties: { type: 'string' } },
    credentials: {
      type: 'array',
      items: { type: 'string' },
      description:
        'The names of the credentials held. Their values are sealed at rest and never shown again.',
    },
    callback_url: {
      type: ['string', 'null'],
      description:
        'Where the partner calls back (register it with the partner where it asks); its last segment is an unguessable token. Null without MKOBA_PUBLIC_URL.',
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
} as const;

export const railCallbackSchema = {
  $id: 'RailCallback',
  type: 'object',
  description:
    'A callback a partner sent, stored as it arrived before it was acknowledged, and what applying it made of it.',
  required: [
    'object',
    'id',
    'rail_partner',
    'partner',
    'path',
    'status',
    'transfer',
    'detail',
    'body',
    'received_at',
    'processed_at',
  ],
  properties: {
    object: { type: 'string', enum: ['rail_callback'] },
    id: idSchema(ID_PREFIXES.railCallback, 'Callback id.'),
    rail_partner: idSchema(ID_PREFIXES.railPartner, 'The configuration whose address it came to.'),
    partner: { type: 'string' },
    path: { type: 'string' },
    status: {
      type: 'string',
      enum: RAIL_CALLBACK_STATUSES,
      description:
        '`received` (to be applied), `applied`, `duplicate` (the same bytes came before), `unchanged` (agreed with what was recorded), `ignored`, `malformed`, `exception` (sent to the reconciliation exception queue).',
    },
    transfer: { type: ['string', 'null'] },
    detail: { type: ['string', 'null'] },
    body: { type: 'string', description: 'The body exactly as it arrived.' },
    received_at: timestampSchema,
    processed_at: nullableTimestampSchema,
  },
} as const;

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

export function railPartnerRoutes(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: ConfigureRailPartnerInput }>(
    '/v1/rail-partners',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'createRailPartner',
        summary: 'Configure a rail partner',
        description:
          'Names the partner that carries a rail (and network) for the organization, with its settings and credentials. The credentials are sealed at rest with the master key and never shown again. One active partner per rail and network: another is a 409 `rail_partner_exists`. The change is recorded as evidence (`rail_partner.update`), naming the fields set, never their values.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
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
        response: {
          201: { description: 'The configuration.', headers: idempotentWriteHeaders, $ref: 'RailPartner#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'rail_partner', action: 'create', targetId: null, payload: request.body },
          async () => ({
            status: 201,
            body: presentRailPartner(
              deps,
              await configureRailPartner(tx, deps, organizationId, request.body, requestActor(request)),
            ),
          }),
        ),
      ),
  );

  app.get<{ Querystring: ListQuery }>(
    '/v1/rail-partners',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'listRailPartners',
        summary: 'List rail partners',
        description: 'Newest first, active and disabled.',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.railPartner),
        response: {
          200: listEnvelopeSchema('RailPartner', 'A page of rail partner configurations.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listRailPartners(deps, principalOf(request).organizationId, pageRequestOf(request.query)),
        (config) => presentRailPartner(deps, config),
      ),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/rail-partners/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'getRailPartner',
        summary: 'Retrieve a rail partner',
        tags: TAGS,
        security: BEARER_SECURITY,
        params: partnerParams,
        response: {
          200: { description: 'The configuration.', $ref: 'RailPartner#' },
          ...problemResponses(...READ_PROBLEMS),
        },
      },
    },
    async (request) =>
      presentRailPartner(
        deps,
        await getRailPartner(deps, principalOf(request).organizationId, request.params.id),
      ),
  );

  app.patch<{ Params: { id: string }; Body: UpdateRailPartnerInput }>(
    '/v1/rail-partners/:id',
    {
      config: { scope: 'admin' },
      schema: {
        operationId: 'updateRailPartner',
        summary: 'Update a rail partner',
        description:
          'Changes settings, rotates credentials (those given replace their namesakes; the rest are kept), or disables (`status: disabled`) or re-activates it. A disabled partner carries no new payouts (they fail `rail_not_configured`) but its callback address still takes late callbacks.',
        tags: TAGS,
        security: BEARER_SECURITY,
        headers: idempotencyHeadersSchema,
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
        response: {
          200: { description: 'The configuration.', headers: idempotentWriteHeaders, $ref: 'RailPartner#' },
          202: pendingChangeResponse,
          ...problemResponses(...WRITE_PROBLEMS),
        },
      },
    },
    (request, reply) =>
      sendWrite(deps, request, reply, async (tx, organizationId) =>
        governedWrite(
          tx,
          deps,
          organizationId,
          request,
          { kind: 'rail_partner', action: 'update', targetId: request.params.id, payload: request.body },
          async () => ({
            status: 200,
            body: presentRailPartner(
              deps,
              await updateRailPartner(
                tx,
                deps,
                organizationId,
                request.params.id,
                request.body,
                requestActor(request),
              ),
            ),
          }),
        ),
      ),
  );

  app.get<{ Querystring: ListQuery & { status?: RailCallbackStatus; transfer?: string } }>(
    '/v1/rail-callbacks',
    {
      config: { scope: 'compliance' },
      schema: {
        operationId: 'listRailCallbacks',
        summary: 'List partner callbacks',
        description:
          'Newest first: every callback partners sent to the organization’s callback addresses, as it arrived, with what applying it made of it. For operators (the `compliance` scope).',
        tags: TAGS,
        security: BEARER_SECURITY,
        querystring: listQuerySchema(ID_PREFIXES.railCallback, {
          status: {
            type: 'string',
            enum: RAIL_CALLBACK_STATUSES,
            description: 'Only callbacks in this status.',
          },
          transfer: idSchema(ID_PREFIXES.transfer, 'Only callbacks applied to this transfer.'),
        }),
        response: {
          200: listEnvelopeSchema('RailCallback', 'A page of callbacks.'),
          ...problemResponses(...READ_PROBLEMS.filter((s) => s !== 404)),
        },
      },
    },
    async (request) =>
      presentList(
        await listOrganizationRailCallbacks(deps, principalOf(request).organizationId, {
          ...pageRequestOf(request.query),
          status: request.query.status,
          transferId: request.query.transfer,
        }),
        presentRailCallback,
      ),
  );
}
