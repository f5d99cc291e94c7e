/**
 * API keys' routes: listed and revoked, and a member's own new key (a governed change when it carries more
 * than `read`/`write`); a key's secret is shown once, when it is created.
 */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../app/deps.ts';
import { SCOPES } from '../../domain/access.ts';
import { ID_PREFIXES } from '../../domain/ids.ts';
import { principalOf, requestActor, requestActorId } from '../../http/auth.ts';
import { isoOrNull } from '../../http/presenters.ts';
import { listRoute, pagedList } from '../../http/readRoutes.ts';
import { actOnId } from '../../http/routeEffects.ts';
import {
  accessByScope,
  closedObjectSchema,
  idempotentOutcome,
  idempotentWrite,
  writeOperation,
  written,
} from '../../http/routeKit.ts';
import { routesInOrder } from '../../http/routeOrder.ts';
import { apiObjectSchema, someOfSchema } from '../../http/schemaBuilders.ts';
import {
  idParamsSchema,
  idSchema,
  nullableStringSchema,
  nullableTimestampSchema,
  timestampSchema,
} from '../../http/schemas.ts';
import { changeSchema, presentChange } from '../authorization/index.ts';
import type { ApiKeyRow } from './useCases/keys.ts';
import { API_KEY_DESCRIPTION_CHARS_MAX, listKeysPage, revokeOrganizationKeyIn } from './useCases/keys.ts';
import { createOwnApiKeyGoverned } from './useCases/ownKeys.ts';

const ACCESS = accessByScope(['API keys']);

export const apiKeySchema = apiObjectSchema(
  'ApiKey',
  'api_key',
  'An API key as the organization sees it: never the key itself nor its hash, only the characters kept for display. A key acts for a member (its scopes capped by that member’s roles at every request) or, a server key, for no member: a server key never votes, clears, rejects, freezes or unfreezes.',
  {
    id: idSchema(ID_PREFIXES.apiKey, 'API key id.'),
    display_prefix: { type: 'string', description: 'The key’s first characters, for recognising it.' },
    scopes: {
      type: 'array',
      items: { type: 'string', enum: SCOPES },
      description:
        'The scopes it was issued with; a member’s key gets at each request only those the member’s roles still grant.',
    },
    member: nullableStringSchema('The member it acts for; null for a server key.'),
    description: { type: ['string', 'null'] },
    created_by: {
      type: 'string',
      description:
        'Who created it: the member who made it for themself, `operator:<user>` (the operator’s CLI on the server, also recorded as evidence), `seed` (the sandbox’s first key), or `unrecorded` (keys older than this field).',
    },
    created_at: timestampSchema,
    revoked_at: nullableTimestampSchema,
  },
);

export const createdApiKeySchema = apiObjectSchema(
  'CreatedApiKey',
  'api_key',
  'A new key: the ApiKey with the key itself, shown in this answer only.',
  {
    ...apiKeySchema.properties,
    key: { type: 'string', description: 'The key. Only its hash is stored: copy it now.' },
  },
);

export const pendingApiKeySchema = apiObjectSchema(
  'PendingApiKey',
  'change',
  'A key waiting for approval: the Change (kind `api_key`) with the key itself, shown in this answer only. The key does not authenticate (401 `invalid_api_key`) until another member approves the change; the approving vote stores it for you with the scopes your roles then grant (`target_id` is its id, `payload.key_id`). Rejected, expired or canceled, it never works.',
  {
    ...changeSchema.properties,
    key: {
      type: 'string',
      description: 'The key. Neither it nor its hash is shown again: copy it now.',
    },
  },
);

export const API_KEY_SCHEMAS = [apiKeySchema, createdApiKeySchema, pendingApiKeySchema];

export function presentApiKey(key: ApiKeyRow) {
  return {
    object: 'api_key',
    id: key.id,
    display_prefix: key.displayPrefix,
    scopes: key.scopes,
    member: key.memberId,
    description: key.description,
    created_by: key.createdBy,
    created_at: key.createdAt.toISOString(),
    revoked_at: isoOrNull(key.revokedAt),
  };
}

function listApiKeysRoute(app: FastifyInstance, deps: Deps): void {
  listRoute(app, deps, {
    path: '/v1/api-keys',
    access: ACCESS.admin,
    present: presentApiKey,
    list: {
      operationId: 'listApiKeys',
      summary: 'List API keys',
      description:
        'Newest first, revoked ones included: each key’s display prefix, scopes, member, who created it and when, and when it was revoked. Never the key nor its hash.',
      ...pagedList('ApiKey', 'A page of API keys.', ID_PREFIXES.apiKey),
    },
    page: listKeysPage,
  });
}

const createApiKeyBodySchema = closedObjectSchema({
  scopes: someOfSchema(SCOPES),
  description: { type: 'string', minLength: 1, maxLength: API_KEY_DESCRIPTION_CHARS_MAX },
});

/**
 * The new key is in the answer, so its idempotency record holds it sealed (`sensitive`), opened only to
 * replay it, and only to the member (or key) that asked: another admin's retry never gets the key.
 */
function createApiKeyRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Body: { scopes?: string[]; description?: string } }>(
    '/v1/api-keys',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'createApiKey',
      summary: 'Create a key for yourself',
      description:
        'A new key that acts for the member the calling key acts for, never for anyone else. Its scopes are at most those both the member’s roles and the calling key grant (403 `beyond_member_roles`, naming `scopes`); without `scopes` it gets all of them. A key that acts for no member cannot create keys (403 `member_required`). Keys for other members and server keys come only from the operator’s CLI on the server (`mkoba keys create`). Recorded as evidence (`api_key.created`); the key is in this answer only. A key with a scope beyond `read`/`write` is a governed change (kind `api_key`): where the organization’s policy asks for approval (pilot and production start with a second admin), the answer is a 202 with the change and the key, which authenticates only once another member approves (see docs/APPROVALS.md). A retry with the same `Idempotency-Key` replays the answer, key included, only to the member (or key) that sent it; from anyone else it is a 422 `idempotency_key_reused`.',
      body: createApiKeyBodySchema,
      responses: {
        201: written('CreatedApiKey', 'The key, shown once.'),
        202: written(
          'PendingApiKey',
          'A key beyond `read`/`write` waiting for the approval the organization’s policy asks for (a `change` rule naming `api_key`): the change, with the key shown once. It works only once another member approves it.',
        ),
      },
    }),
    idempotentOutcome(
      deps,
      async (tx, organizationId, request) => {
        const principal = principalOf(request);
        const outcome = await createOwnApiKeyGoverned(
          tx,
          deps,
          {
            organizationId,
            memberId: principal.member?.id ?? null,
            scopes: principal.scopes,
            actor: requestActor(request),
          },
          { scopes: request.body?.scopes, description: request.body?.description },
        );
        return outcome.status === 'pending'
          ? { status: 202, body: { ...presentChange(outcome.change), key: outcome.key }, sensitive: true }
          : { status: 201, body: { ...presentApiKey(outcome.record), key: outcome.key }, sensitive: true };
      },
      (request) => requestActorId(request),
    ),
  );
}

function revokeApiKeyRoute(app: FastifyInstance, deps: Deps): void {
  app.post<{ Params: { id: string } }>(
    '/v1/api-keys/:id/revoke',
    writeOperation({
      ...ACCESS.admin,
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key',
      description:
        'Any key of the organization, at once in this process and within 5 seconds in others; requests with it get 401 `api_key_revoked`. Revoking a revoked key changes nothing. Recorded as evidence (`api_key.revoked`).',
      params: idParamsSchema(ID_PREFIXES.apiKey, 'API key id.'),
      responses: { 200: written('ApiKey', 'The key, revoked.') },
    }),
    idempotentWrite(deps, 200, actOnId(deps, revokeOrganizationKeyIn, presentApiKey)),
  );
}

/**
 * The organization's keys: admins list them and revoke any; a member creates keys for themself only. Keys
 * for another member, and server keys beyond `read` and `write`, come only from `mkoba keys create`.
 */
export const apiKeyRoutes = routesInOrder(listApiKeysRoute, createApiKeyRoute, revokeApiKeyRoute);
