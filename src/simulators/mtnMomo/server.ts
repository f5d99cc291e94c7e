/**
 * The MoMo simulator's HTTP server: reads and records each request, passes it through the checks MTN's
 * gateway makes (forced failures, route, subscription key, access token, target environment), hands it to
 * its product's API (token, collection, disbursement), and writes the answer, or leaves it hanging. Also
 * the simulator's controls.
 */
import type http from 'node:http';
import { type SimulatorWorkControls, waitForRecords, workControls } from '../controls.ts';
import { arrivingRequest, decodedOrUndefined, listenSimulator, readRequestBody } from '../shared.ts';
import { ACCOUNT_ROUTES, readAccountHolderActive, readBalance } from './account.ts';
import { COLLECTION_API } from './collection.ts';
import { DISBURSEMENT_API } from './disbursement.ts';
import { answerProvisioning, provisioningRouteOf } from './provisioning.ts';
import { createRequest, readRequest } from './requests.ts';
import {
  type Answer,
  ERROR_BODY_OF_STATUS,
  keyOf,
  MOMO_SIMULATOR_WAIT_TIMEOUT_MS,
  type MomoCallbackDelivery,
  type MomoCredentials,
  type MomoProduct,
  type MomoProductApi,
  type MomoReceivedRequest,
  type MomoResource,
  type MomoRoute,
  type MomoSimulatorOptions,
  type MomoState,
  newMomoState,
  presented,
} from './state.ts';
import { authorizeBearer, issueToken, TOKEN_ROUTE } from './token.ts';

export interface MomoSimulator extends SimulatorWorkControls<500 | 503> {
  url: string;
  /** What the simulator accepts, for building an adapter's configuration. */
  credentials: MomoCredentials;
  /** Every request received, in arrival order. */
  readonly requests: readonly MomoReceivedRequest[];
  /** Every callback delivery, in the order they were answered (or gave up). */
  readonly callbacks: readonly MomoCallbackDelivery[];
  /** The request with this X-Reference-Id, as GET would answer it. */
  resource(product: MomoProduct, referenceId: string): MomoResource | undefined;
  /** Every request created for a product, oldest first. */
  resources(product: MomoProduct): Array<MomoResource & { referenceId: string }>;
  /** The product account's available balance from now on (a decimal string, as MTN answers it). */
  setBalance(product: MomoProduct, availableBalance: string): void;
  /** Every issued access token stops working, as an expired one does. */
  expireTokens(): void;
  /** Resolves once `count` callbacks (about one externalId, when given) have been answered. */
  waitForCallbacks(filter?: {
    externalId?: string;
    count?: number;
    timeoutMs?: number;
  }): Promise<MomoCallbackDelivery[]>;
}

/** The largest request body the simulator reads. */
const REQUEST_BODY_MAX_BYTES = 64 * 1024;

/** The error bodies MTN's gateway (Azure API Management) answers with. */
const INVALID_SUBSCRIPTION_KEY_BODY = {
  statusCode: 401,
  message:
    'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.',
};
const MISSING_SUBSCRIPTION_KEY_BODY = {
  statusCode: 401,
  message:
    'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.',
};
const INVALID_TOKEN_BODY = { statusCode: 401, message: 'Unauthorized. Access token is missing or invalid.' };
const NOT_FOUND_ROUTE_BODY = { statusCode: 404, message: 'Resource not found' };

const PRODUCT_APIS: Record<MomoProduct, MomoProductApi> = {
  collection: COLLECTION_API,
  disbursement: DISBURSEMENT_API,
};

const ROUTES: MomoRoute[] = [
  TOKEN_ROUTE,
  ...COLLECTION_API.routes,
  ...DISBURSEMENT_API.routes,
  ...ACCOUNT_ROUTES,
];

interface Route {
  product: MomoProduct;
  action: MomoRoute['action'];
  /** The path's parameters after the product, decoded: a reference id, or an id type and id. */
  params: string[];
}

export async function startMomoSimulator(options: MomoSimulatorOptions = {}): Promise<MomoSimulator> {
  const state = newMomoState(options);
  const { server, url } = await listenSimulator(
    (request, response) => receive(state, request, response),
    options,
  );
  return simulatorControls(state, server, url);
}

/** The simulator as its user sees it, over the state its products share. */
function simulatorControls(state: MomoState, server: http.Server, url: string): MomoSimulator {
  const { stored, callbacks } = state;
  return {
    ...workControls(state, server, MOMO_SIMULATOR_WAIT_TIMEOUT_MS, 'scheduled work to finish'),
    url,
    credentials: state.credentials,
    requests: state.requests,
    callbacks,
    resource: (product, referenceId) => {
      const entry = stored.get(keyOf(product, referenceId));
      return entry ? presented(structuredClone(entry.resource)) : undefined;
    },
    resources: (product) =>
      [...stored.values()]
        .filter((entry) => entry.product === product)
        .map((entry) => ({ ...presented(structuredClone(entry.resource)), referenceId: entry.referenceId })),
    setBalance: (product, availableBalance) => {
      state.balances[product] = availableBalance;
    },
    expireTokens: () => state.tokens.clear(),
    waitForCallbacks: ({ externalId, count = 1, timeoutMs = MOMO_SIMULATOR_WAIT_TIMEOUT_MS } = {}) =>
      waitForRecords(
        state,
        callbacks,
        (delivery) => externalId === undefined || delivery.externalId === externalId,
        count,
        timeoutMs,
        `${count} callback(s)${externalId === undefined ? '' : ` about ${externalId}`}`,
      ),
  };
}

/** Records the request, reads its body (one too large is answered 413), and writes its answer. */
async function receive(
  state: MomoState,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const record: MomoReceivedRequest = arrivingRequest(request);
  state.requests.push(record);
  try {
    record.body = await readRequestBody(request, REQUEST_BODY_MAX_BYTES);
  } catch {
    record.status = 413;
    response.writeHead(413).end();
    return;
  }
  if (state.config.latencyMs > 0) await sleep(state.config.latencyMs);
  const pathname = new URL(record.path, 'http://simulator.invalid').pathname;
  const result = answer(state, record.method, pathname, request.headers, record.body);
  if (result === undefined) return; // hangs until the client gives up or the simulator closes
  record.status = result.status;
  if (result.body === undefined) {
    response.writeHead(result.status).end();
  } else {
    response
      .writeHead(result.status, { 'Content-Type': 'application/json;charset=utf-8' })
      .end(JSON.stringify(result.body));
  }
}

/** Answers a request, or returns undefined for one left hanging. */
function answer(
  state: MomoState,
  method: string,
  pathname: string,
  headers: http.IncomingHttpHeaders,
  text: string,
): Answer | undefined {
  const failure = state.failures.shift();
  if (failure !== undefined) return { status: failure, body: ERROR_BODY_OF_STATUS[failure] };
  const provisioning = provisioningRouteOf(method, pathname);
  const route = provisioning === undefined ? routeOf(method, pathname) : undefined;
  if (provisioning === undefined && route === undefined) return { status: 404, body: NOT_FOUND_ROUTE_BODY };
  const subscriptionKey = headers['ocp-apim-subscription-key'];
  if (subscriptionKey === undefined) return { status: 401, body: MISSING_SUBSCRIPTION_KEY_BODY };
  // Provisioning takes any product's subscription key; a product's API only its own.
  const keys =
    route === undefined ? Object.values(state.subscriptionKeys) : [state.subscriptionKeys[route.product]];
  if (typeof subscriptionKey !== 'string' || !keys.includes(subscriptionKey)) {
    return { status: 401, body: INVALID_SUBSCRIPTION_KEY_BODY };
  }
  if (route === undefined) {
    return provisioning === undefined
      ? { status: 404, body: NOT_FOUND_ROUTE_BODY }
      : answerProvisioning(state, provisioning, headers, text);
  }
  if (route.action === 'token') return issueToken(state, route.product, headers.authorization, text);
  const apiUser = authorizeBearer(state, route.product, headers.authorization);
  if (apiUser === undefined) return { status: 401, body: INVALID_TOKEN_BODY };
  if (headers['x-target-environment'] !== state.credentials.targetEnvironment) {
    return {
      status: 500,
      body: {
        code: 'NOT_ALLOWED_TARGET_ENVIRONMENT',
        message: 'Access to target environment is forbidden.',
      },
    };
  }
  const [first = '', second = ''] = route.params;
  if (route.action === 'balance') return readBalance(state, route.product);
  if (route.action === 'active') return readAccountHolderActive(first, second);
  const api = PRODUCT_APIS[route.product];
  if (route.action === 'read') return readRequest(state, api, first);
  return createRequest(state, api, headers, text, apiUser);
}

function routeOf(method: string, pathname: string): Route | undefined {
  for (const route of ROUTES) {
    const match = route.pattern.exec(pathname);
    if (match && method === route.method) {
      const params = match.slice(2).map((param) => decodedOrUndefined(param ?? ''));
      // A malformed escape (`%zz`) names no resource: the gateway's 404, not an error of ours.
      if (params.some((param) => param === undefined)) return undefined;
      return { product: match[1] as MomoProduct, action: route.action, params: params as string[] };
    }
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
