/**
 * What the collection and disbursement APIs share: creating a request (checked, refused on a repeated
 * X-Reference-Id or as its number says, else stored PENDING and answered 202 with no body) and reading one
 * back as GET answers it.
 */
import type http from 'node:http';
import { advance } from './callbacks.ts';
import { behaviourOf } from './numbers.ts';
import {
  type Answer,
  ERROR_BODY_OF_STATUS,
  keyOf,
  type MomoProductApi,
  type MomoState,
  presented,
  type StoredRequest,
} from './state.ts';
import { callbackHostOf, validateCreate } from './validation.ts';

/**
 * The callback host registered for the API user whose token made the request: a provisioned user's
 * providerCallbackHost, or the simulator's own user's (its option), undefined when none is registered.
 */
function registeredCallbackHost(state: MomoState, apiUser: string): string | undefined {
  const registered = state.apiUsers.get(apiUser)?.providerCallbackHost ?? state.config.providerCallbackHost;
  return registered === undefined ? undefined : callbackHostOf(registered);
}

/** POST a request-to-pay or transfer, by the API user whose token it carries; undefined for one left hanging. */
export function createRequest(
  state: MomoState,
  api: MomoProductApi,
  headers: http.IncomingHttpHeaders,
  text: string,
  apiUser: string,
): Answer | undefined {
  const checked = validateCreate(state.config, api, headers, text, registeredCallbackHost(state, apiUser));
  if ('status' in checked) return checked;
  const key = keyOf(api.product, checked.referenceId);
  if (state.stored.has(key)) {
    return {
      status: 409,
      body: {
        code: 'RESOURCE_ALREADY_EXIST',
        message: 'Duplicated reference id. Creation of resource failed.',
      },
    };
  }
  const party = checked.resource[api.partyKey];
  const behaviour = behaviourOf(party?.partyId);
  if (behaviour.kind === 'server_error') {
    return { status: behaviour.status, body: ERROR_BODY_OF_STATUS[behaviour.status] };
  }
  if (behaviour.kind === 'hang') return undefined;
  const refusal = behaviour.kind === 'refuse_on_post' ? behaviour.reasons[api.product] : undefined;
  if (refusal !== undefined) return { status: 500, body: { code: refusal, message: `Refused: ${refusal}.` } };
  const entry: StoredRequest = { product: api.product, ...checked };
  state.stored.set(key, entry);
  advance(state, entry, behaviour);
  return { status: 202 };
}

/** GET a request-to-pay or transfer by its X-Reference-Id. */
export function readRequest(state: MomoState, api: MomoProductApi, referenceId: string): Answer {
  const entry = state.stored.get(keyOf(api.product, referenceId));
  return entry
    ? { status: 200, body: presented(entry.resource) }
    : { status: 404, body: { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' } };
}
