/**
 * The organization's verification provider (admins): Smile ID configured with its settings, shown back,
 * and its API key, write-only and sealed at rest; a governed change, as rail partners are. Read back with
 * the callback URL to register with Smile ID.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { retrieveOwn } from '../../../http/readRoutes.ts';
import { makeFromBody } from '../../../http/routeEffects.ts';
import { accessByScope, found, readOperation, writeOperation, written } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import { timestampSchema } from '../../../http/schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedCreation,
} from '../../authorization/index.ts';
import {
  configureSmileId,
  getSmileIdConfig,
  type SmileIdConfig,
  type SmileIdConfigInput,
  smileIdCallbackUrl,
} from '../useCases/smileId/config.ts';

const ACCESS = accessByScope(['Verifications']);
/** The longest setting or credential taken. */
const FIELD_LENGTH_MAX = 200;
const field = { type: 'string', minLength: 1, maxLength: FIELD_LENGTH_MAX } as const;

export const verificationProviderSchema = apiObjectSchema(
  'VerificationProvider',
  'verification_provider',
  'The organization’s verification provider: Smile ID, which then decides its KYC and KYB verifications in every environment (docs/rails/smile-id.md).',
  {
    provider: { type: 'string', enum: ['smile_id'] },
    settings: {
      type: 'object',
      required: ['base_url', 'partner_id'],
      properties: { base_url: { type: 'string' }, partner_id: { type: 'string' } },
    },
    credentials: {
      type: 'array',
      items: { type: 'string' },
      description:
        'The names of the credentials held (`api_key`). Their values are sealed at rest and never shown again.',
    },
    callback_url: {
      type: ['string', 'null'],
      description:
        'Where Smile ID POSTs results (each job names it); its last segment is an unguessable token. Null without MKOBA_PUBLIC_URL.',
    },
    created_at: timestampSchema,
    updated_at: timestampSchema,
  },
);

function present(deps: Deps, config: SmileIdConfig) {
  return {
    object: 'verification_provider',
    provider: 'smile_id',
    settings: config.settings,
    credentials: ['api_key'],
    callback_url: smileIdCallbackUrl(deps, config),
    created_at: config.createdAt.toISOString(),
    updated_at: config.updatedAt.toISOString(),
  };
}

export function verificationProviderRoutes(app: FastifyInstance, deps: Deps): void {
  app.put<{ Body: SmileIdConfigInput }>(
    '/v1/verification_provider',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'setVerificationProvider',
      summary: 'Configure the verification provider',
      description:
        'Names Smile ID as the organization’s verification provider, with its `base_url` and `partner_id` (shown back) and its `api_key` (sealed at rest, never shown again); a later call replaces them and keeps the callback URL. `base_url` must be a host this deployment may call (public HTTPS in pilot and production). Recorded as evidence (`verification_provider.update`), never the key. A governed change (`verification_provider`).',
      body: {
        type: 'object',
        required: ['provider', 'settings', 'credentials'],
        additionalProperties: false,
        properties: {
          provider: { type: 'string', enum: ['smile_id'] },
          settings: {
            type: 'object',
            required: ['base_url', 'partner_id'],
            additionalProperties: false,
            properties: { base_url: field, partner_id: field },
          },
          credentials: {
            type: 'object',
            required: ['api_key'],
            additionalProperties: false,
            properties: { api_key: field },
          },
        },
      },
      responses: { 200: written('VerificationProvider', 'The configuration.'), 202: pendingChangeResponse },
    }),
    governedIdempotentWrite(
      deps,
      200,
      proposedCreation('verification_provider', 'configure'),
      makeFromBody(deps, configureSmileId, (config) => present(deps, config)),
    ),
  );
  app.get(
    '/v1/verification_provider',
    readOperation({
      ...ACCESS.admin,
      operationId: 'getVerificationProvider',
      summary: 'Retrieve the verification provider',
      description:
        'The organization’s Smile ID configuration, without its key; a 404 when none is configured.',
      responses: { 200: found('VerificationProvider', 'The configuration.') },
    }),
    retrieveOwn(deps, getSmileIdConfig, (config: SmileIdConfig) => present(deps, config)),
  );
}
