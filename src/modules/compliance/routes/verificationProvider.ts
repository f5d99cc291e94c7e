/**
 * The organization's verification provider (admins): Smile ID configured with its settings, shown back,
 * and its API key, write-only and sealed at rest; a governed change, as rail partners are. Read back with
 * the callback URL to register with Smile ID.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../../app/deps.ts';
import { ID_PREFIXES } from '../../../domain/ids.ts';
import { requestActor } from '../../../http/auth.ts';
import type { ListQuery } from '../../../http/presenters.ts';
import { isoOrNull } from '../../../http/presenters.ts';
import { enumFilter, listRoute, pagedList, retrieveOwn } from '../../../http/readRoutes.ts';
import { makeFromBody } from '../../../http/routeEffects.ts';
import { accessByScope, found, readOperation, writeOperation, written } from '../../../http/routeKit.ts';
import { apiObjectSchema } from '../../../http/schemaBuilders.ts';
import {
  idSchema,
  nullableIdSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../../http/schemas.ts';
import {
  governedIdempotentWrite,
  pendingChangeResponse,
  proposedCreation,
} from '../../authorization/index.ts';
import {
  listOrganizationSmileIdCalls,
  SMILE_ID_CALL_KINDS,
  SMILE_ID_CALL_OUTCOMES,
  type SmileIdCallKind,
  type SmileIdCallOutcome,
  type SmileIdCallRecord,
} from '../useCases/smileId/calls.ts';
import {
  configureSmileId,
  getSmileIdConfig,
  type SmileIdConfig,
  type SmileIdConfigInput,
  smileIdCallbackUrl,
} from '../useCases/smileId/config.ts';
import { removeSmileId, type SmileIdRemoval } from '../useCases/smileId/removal.ts';

const ACCESS = accessByScope(['Verifications']);
/** The longest setting or credential taken. */
const FIELD_LENGTH_MAX = 200;
const field = { type: 'string', minLength: 1, maxLength: FIELD_LENGTH_MAX } as const;
/** The one provider there is. */
const smileIdProviderSchema = { type: 'string', enum: ['smile_id'] } as const;

export const verificationProviderSchema = apiObjectSchema(
  'VerificationProvider',
  'verification_provider',
  'The organization’s verification provider: Smile ID, which then decides its KYC and KYB verifications in every environment (docs/rails/smile-id.md).',
  {
    provider: smileIdProviderSchema,
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
    callback_url: nullableStringSchema(
      'Where Smile ID POSTs results (each job names it); its last segment is an unguessable token. Null without MKOBA_PUBLIC_URL.',
    ),
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

export const verificationProviderCallSchema = apiObjectSchema(
  'VerificationProviderCall',
  'verification_provider_call',
  'One call Mkoba sent to the verification provider (Smile ID), or one callback it received: what, about which job and verification, Smile ID’s HTTP status (for a callback, what Mkoba answered) and code, the outcome and how long it took. Never a request’s or answer’s body, names, ID numbers, signatures or keys.',
  {
    id: idSchema(ID_PREFIXES.verificationProviderCall, 'Call id.'),
    provider: smileIdProviderSchema,
    kind: {
      type: 'string',
      enum: SMILE_ID_CALL_KINDS,
      description: '`submit` (an async job sent), `job_status` (a poll) or `callback` (a result received).',
    },
    path: nullableStringSchema('The path called under `base_url`; null for a callback.'),
    job_id: nullableStringSchema('Smile ID’s `partner_params.job_id` (Mkoba’s own).'),
    verification: nullableIdSchema(ID_PREFIXES.verification, 'The verification the job is about.'),
    http_status: { type: ['integer', 'null'] },
    result_code: nullableStringSchema(
      'Smile ID’s result code (`1012`, …) or error code (`2215`, …), when it gave one.',
    ),
    outcome: {
      type: 'string',
      enum: SMILE_ID_CALL_OUTCOMES,
      description:
        'A call: `sent` (recorded before the request left; still `sent`, its answer was never recorded: the process stopped, or it is under way), then `accepted`, `refused`, `timeout` or `error`. A callback: `accepted` or `refused`.',
    },
    detail: nullableStringSchema(
      'A call: `complete`, `in_progress`, `bad_signature`, `unavailable`, `timeout`, `blocked_address`, `no_connection`. A callback: how it was applied (`applied`, `duplicate`, `undecided`, `bad_signature`, `unknown_job`, `malformed`).',
    ),
    duration_ms: {
      type: ['integer', 'null'],
      description: 'How long the call took; null while `sent`, and for a callback.',
    },
    at: { ...timestampSchema, description: 'When the call was sent, or the callback received.' },
    answered_at: {
      ...nullableTimestampSchema,
      description: 'When the call’s answer (or failure) was recorded; null while `sent`, and for a callback.',
    },
  },
);

function presentCall(call: SmileIdCallRecord) {
  return {
    object: 'verification_provider_call',
    id: call.id,
    provider: 'smile_id',
    kind: call.kind,
    path: call.path,
    job_id: call.jobId,
    verification: call.verificationId,
    http_status: call.httpStatus,
    result_code: call.resultCode,
    outcome: call.outcome,
    detail: call.detail,
    duration_ms: call.durationMs,
    at: call.at.toISOString(),
    answered_at: isoOrNull(call.answeredAt),
  };
}

type CallsQuery = ListQuery & {
  verification?: string;
  kind?: SmileIdCallKind;
  outcome?: SmileIdCallOutcome;
};

function listCallsRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/verification-provider-calls',
    access: ACCESS.compliance,
    present: presentCall,
    list: {
      operationId: 'listVerificationProviderCalls',
      summary: 'List verification provider calls',
      description:
        'Newest first: every call Mkoba sent to the organization’s Smile ID (job submissions, `/job_status` polls) and every callback it received, one by one, without personal data. For operators (the `compliance` scope), as `GET /v1/rail-callbacks` is for rail partners.',
      ...pagedList(
        'VerificationProviderCall',
        'A page of calls and callbacks.',
        ID_PREFIXES.verificationProviderCall,
        {
          verification: idSchema(ID_PREFIXES.verification, 'Only those about this verification.'),
          kind: enumFilter(SMILE_ID_CALL_KINDS, 'Only calls of this kind.'),
          outcome: enumFilter(SMILE_ID_CALL_OUTCOMES, 'Only calls with this outcome.'),
        },
      ),
    },
    page: listOrganizationSmileIdCalls,
    filtersOf: (query: CallsQuery) => ({
      verificationId: query.verification,
      kind: query.kind,
      outcome: query.outcome,
    }),
  });
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
          provider: smileIdProviderSchema,
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
  removeRoute(app, deps);
  listCallsRoute(app, deps);
}

function removeRoute(app: FastifyInstance, deps: Deps): void {
  app.delete(
    '/v1/verification_provider',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'removeVerificationProvider',
      summary: 'Remove the verification provider',
      description:
        'Removes the organization’s Smile ID configuration. Its sealed API key is destroyed (with the sealed copies its decided changes kept) and its callback address answers 404 from then on. Jobs in flight are withdrawn: their verifications stay `pending` for an operator (`POST /v1/verifications/{id}/approve`, `/reject`, `/request_documents`), since no result can be fetched or authenticated without the key. New verifications then go to the sandbox provider in the sandbox and wait for an operator elsewhere. Recorded as evidence (`verification_provider.remove`). A governed change (`verification_provider`, action `remove`), as configuring it is.',
      responses: {
        200: written(
          {
            type: 'object',
            required: ['object', 'provider', 'deleted', 'withdrawn_verifications'],
            properties: {
              object: { type: 'string', enum: ['verification_provider'] },
              provider: smileIdProviderSchema,
              deleted: { type: 'boolean', enum: [true] },
              withdrawn_verifications: {
                type: 'array',
                items: idSchema(ID_PREFIXES.verification, 'A verification now waiting for an operator.'),
                description:
                  'The verifications whose Smile ID jobs were in flight: they wait for an operator.',
              },
            },
          },
          'Removed.',
        ),
        202: pendingChangeResponse,
      },
    }),
    governedIdempotentWrite(
      deps,
      200,
      () => ({ kind: 'verification_provider', action: 'remove', targetId: null, payload: {} }),
      async (tx, organizationId, request) =>
        presentRemoval(await removeSmileId(tx, deps, organizationId, requestActor(request))),
    ),
  );
}

function presentRemoval(removal: SmileIdRemoval) {
  return {
    object: 'verification_provider',
    provider: 'smile_id',
    deleted: true,
    withdrawn_verifications: removal.withdrawnVerificationIds,
  };
}
