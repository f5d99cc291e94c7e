/**
 * MTN MoMo's sandbox user provisioning API: an API user made under an X-Reference-Id the caller chooses, with
 * the providerCallbackHost its callbacks must go to (POST /v1_0/apiuser), read back (GET
 * /v1_0/apiuser/{X-Reference-Id}), and given an API key (POST /v1_0/apiuser/{X-Reference-Id}/apikey), which
 * then buys tokens as the simulator's own API user does. Called with any product's subscription key.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { jsonObjectOf } from '../../domain/json.ts';
import type { Answer, MomoState } from './state.ts';
import { UUID_V4_PATTERN } from './validation.ts';

/** The longest providerCallbackHost taken (a DNS name's limit, with room for a scheme and a path). */
const PROVIDER_CALLBACK_HOST_MAX_CHARS = 512;

/** A provisioning request: which operation, on which API user (the path's id, for the last two). */
export type ProvisioningRoute =
  | { operation: 'create' }
  | { operation: 'read'; userId: string }
  | { operation: 'key'; userId: string };

export function provisioningRouteOf(method: string, pathname: string): ProvisioningRoute | undefined {
  if (method === 'POST' && pathname === '/v1_0/apiuser') return { operation: 'create' };
  const read = /^\/v1_0\/apiuser\/([^/]+)$/.exec(pathname);
  if (method === 'GET' && read) return { operation: 'read', userId: read[1] ?? '' };
  const key = /^\/v1_0\/apiuser\/([^/]+)\/apikey$/.exec(pathname);
  if (method === 'POST' && key) return { operation: 'key', userId: key[1] ?? '' };
  return undefined;
}

const NOT_FOUND = {
  status: 404,
  body: { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' },
};

export function answerProvisioning(
  state: MomoState,
  route: ProvisioningRoute,
  headers: http.IncomingHttpHeaders,
  text: string,
): Answer {
  if (route.operation === 'create') return createApiUser(state, headers['x-reference-id'], text);
  if (!UUID_V4_PATTERN.test(route.userId)) {
    return { status: 400, body: { message: 'The API user id must be a UUID version 4.' } };
  }
  const user = state.apiUsers.get(route.userId);
  if (user === undefined) return NOT_FOUND;
  if (route.operation === 'read') {
    return {
      status: 200,
      body: {
        providerCallbackHost: user.providerCallbackHost,
        targetEnvironment: state.credentials.targetEnvironment,
      },
    };
  }
  // A new key replaces the one before: only the newest buys tokens.
  user.apiKey = randomBytes(16).toString('hex');
  return { status: 201, body: { apiKey: user.apiKey } };
}

/** POST /v1_0/apiuser: 201 with no body; the X-Reference-Id becomes the API user's id. */
function createApiUser(state: MomoState, referenceId: string | string[] | undefined, text: string): Answer {
  if (typeof referenceId !== 'string' || !UUID_V4_PATTERN.test(referenceId)) {
    return { status: 400, body: { message: 'X-Reference-Id must be a UUID version 4.' } };
  }
  const host = jsonObjectOf(text)?.providerCallbackHost;
  if (typeof host !== 'string' || host.trim() === '' || host.length > PROVIDER_CALLBACK_HOST_MAX_CHARS) {
    return { status: 400, body: { message: 'The body must be {"providerCallbackHost": a host name}.' } };
  }
  if (state.apiUsers.has(referenceId) || referenceId === state.credentials.apiUser) {
    return {
      status: 409,
      body: {
        code: 'RESOURCE_ALREADY_EXIST',
        message: 'Duplicated reference id. Creation of resource failed.',
      },
    };
  }
  state.apiUsers.set(referenceId, { providerCallbackHost: host });
  return { status: 201 };
}
