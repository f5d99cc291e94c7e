/**
 * A stand-in for MTN's MoMo Open API, collection and disbursement products, as a real HTTP server for
 * tests and local development. It speaks MTN's paths, headers, bodies and statuses (see
 * docs/rails/mtn-momo.md for what was checked against MTN's published documentation and what is
 * assumed), and decides each request's fate by the payer's or payee's number (MOMO_SIMULATOR_NUMBERS).
 *
 * Like MTN's platform: a POST is answered 202 with no body and the request stays PENDING until it is
 * final; the final result is sent once to the request's X-Callback-Url, with the body GET answers.
 * Everything is kept in memory, per simulator; nothing is persisted.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { SANDBOX_DELAYED_SETTLEMENT_MS } from '../rails/sandbox.ts';

export type MomoProduct = 'collection' | 'disbursement';
export type MomoStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

/** MTN's access tokens live one hour. */
export const MOMO_SIMULATOR_TOKEN_LIFETIME_SECONDS = 3_600;
/** How long an accepted request stays PENDING before it is final (numbers that settle or fail). */
export const MOMO_SIMULATOR_PROCESSING_MS = 50;
/** How long after its request is final the late-callback number's callback is sent. */
export const MOMO_SIMULATOR_LATE_CALLBACK_DELAY_MS = 2_000;
/** MTN's platform gives a callback 2 seconds to be answered. */
export const MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS = 2_000;
/** How long waitForCallbacks and whenIdle wait unless told otherwise. */
export const MOMO_SIMULATOR_WAIT_TIMEOUT_MS = 5_000;
/** MTN refuses a payerMessage or payeeNote longer than this. */
export const MOMO_NOTE_MAX_CHARS = 160;
/** The largest request body the simulator reads. */
const REQUEST_BODY_MAX_BYTES = 64 * 1024;

/**
 * What happens to a request, by the number it names. `fail` carries MTN's reason per product; a product
 * without one succeeds (APPROVAL_REJECTED and EXPIRED exist only for request-to-pay).
 */
export type MomoSimulatorBehaviour =
  /** PENDING, then SUCCESSFUL after MOMO_SIMULATOR_PROCESSING_MS, one callback. */
  | { kind: 'succeed' }
  /** PENDING, then FAILED with MTN's reason, one callback. */
  | { kind: 'fail'; reasons: Partial<Record<MomoProduct, string>> }
  /** PENDING for ever, no callback: the payer never answers, the platform never decides. */
  | { kind: 'stay_pending' }
  /** PENDING for the simulator's delayedSettlementMs, then SUCCESSFUL, one callback. */
  | { kind: 'succeed_after_delay' }
  /** SUCCESSFUL, and the same callback sent twice. */
  | { kind: 'duplicate_callback' }
  /** SUCCESSFUL (GET says so at once), the callback only lateCallbackDelayMs later. */
  | { kind: 'late_callback' }
  /** SUCCESSFUL; the callback's body is cut short, not MTN's shape. */
  | { kind: 'malformed_callback' }
  /** SUCCESSFUL; no callback is ever sent, only GET tells. */
  | { kind: 'no_callback' }
  /** The POST is answered with this status and MTN's error body; nothing is created. */
  | { kind: 'server_error'; status: 500 | 503 }
  /** The POST is never answered (the connection stays open until the client gives up). */
  | { kind: 'hang' }
  /**
   * The POST is refused at once with HTTP 500 and the reason (as MTN's error table lists for transfers);
   * nothing is created. A product without a reason succeeds.
   */
  | { kind: 'refuse_on_post'; reasons: Partial<Record<MomoProduct, string>> };

export interface MomoSimulatorNumber {
  behaviour: MomoSimulatorBehaviour;
  /** The SANDBOX_PHONE_BEHAVIOURS number whose outcome this one mirrors on an MTN (Uganda) number. */
  mirrors?: string;
}

/**
 * Magic MSISDNs (E.164, as our transfers carry them; MTN's partyId is the same digits without `+`). Any
 * other number made of 8 to 15 digits succeeds.
 */
export const MOMO_SIMULATOR_NUMBERS: Readonly<Record<string, MomoSimulatorNumber>> = {
  '+256770000000': { behaviour: { kind: 'succeed' }, mirrors: '+254700000000' },
  '+256770000001': {
    behaviour: { kind: 'fail', reasons: { disbursement: 'PAYEE_NOT_FOUND', collection: 'PAYER_NOT_FOUND' } },
    mirrors: '+254700000001',
  },
  '+256770000002': {
    behaviour: {
      kind: 'fail',
      reasons: { disbursement: 'NOT_ENOUGH_FUNDS', collection: 'NOT_ENOUGH_FUNDS' },
    },
    mirrors: '+254700000002',
  },
  '+256770000003': { behaviour: { kind: 'stay_pending' }, mirrors: '+254700000003' },
  '+256770000004': { behaviour: { kind: 'succeed_after_delay' }, mirrors: '+254700000004' },
  '+256770000005': {
    behaviour: {
      kind: 'fail',
      reasons: { disbursement: 'PAYER_LIMIT_REACHED', collection: 'PAYER_LIMIT_REACHED' },
    },
    mirrors: '+254700000005',
  },
  '+256770000006': { behaviour: { kind: 'duplicate_callback' } },
  '+256770000007': { behaviour: { kind: 'late_callback' } },
  '+256770000008': { behaviour: { kind: 'malformed_callback' } },
  '+256770000009': { behaviour: { kind: 'no_callback' } },
  '+256770000010': { behaviour: { kind: 'server_error', status: 500 } },
  '+256770000011': { behaviour: { kind: 'server_error', status: 503 } },
  '+256770000012': { behaviour: { kind: 'hang' } },
  '+256770000013': { behaviour: { kind: 'fail', reasons: { collection: 'APPROVAL_REJECTED' } } },
  '+256770000014': { behaviour: { kind: 'fail', reasons: { collection: 'EXPIRED' } } },
  '+256770000015': {
    behaviour: {
      kind: 'refuse_on_post',
      reasons: { disbursement: 'PAYEE_NOT_FOUND', collection: 'PAYER_NOT_FOUND' },
    },
  },
};

export interface MomoSimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** The API user (a UUID) and API key that POST /{product}/token/ accepts. */
  apiUser?: string;
  apiKey?: string;
  collectionSubscriptionKey?: string;
  disbursementSubscriptionKey?: string;
  /** The X-Target-Environment the simulator answers to; MTN's sandbox is `sandbox`. */
  targetEnvironment?: string;
  /** When set, an X-Callback-Url on another host is refused, as MTN refuses one off the registered host. */
  providerCallbackHost?: string;
  /** When set, a currency outside this list is refused with MTN's INVALID_CURRENCY (the sandbox takes EUR). */
  currencies?: readonly string[];
  tokenLifetimeSeconds?: number;
  processingMs?: number;
  /** How long the settle-after-a-delay number stays PENDING; the sandbox rail's delay unless given. */
  delayedSettlementMs?: number;
  lateCallbackDelayMs?: number;
  /**
   * MTN's callback page says to accept both PUT and POST on the callback listener, and its API reference
   * names POST for some operations and PUT for others without naming one for transfer and requesttopay;
   * PUT unless given.
   */
  callbackMethod?: 'PUT' | 'POST';
  /** Delay before every answer. */
  latencyMs?: number;
}

export interface MomoReceivedRequest {
  method: string;
  /** The path with its query, as sent. */
  path: string;
  /** Lower-case header names. */
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status answered; 0 while unanswered (a hanging request). */
  status: number;
  at: number;
}

export interface MomoCallbackDelivery {
  product: MomoProduct;
  referenceId: string;
  externalId: string;
  url: string;
  method: 'PUT' | 'POST';
  body: string;
  /** The receiver's status, or undefined when the delivery did not get an answer (see error). */
  status?: number;
  error?: string;
  at: number;
}

/** A request as GET answers it (and as its callback carries it). */
export interface MomoResource {
  amount: string;
  currency: string;
  financialTransactionId?: string;
  externalId: string;
  payer?: { partyIdType: string; partyId: string };
  payee?: { partyIdType: string; partyId: string };
  payerMessage?: string;
  payeeNote?: string;
  status: MomoStatus;
  /** MTN's reason code when FAILED, as its live platform sends it (a string). */
  reason?: string;
}

export interface MomoSimulator {
  url: string;
  /** What the simulator accepts, for building an adapter's configuration. */
  credentials: {
    apiUser: string;
    apiKey: string;
    collectionSubscriptionKey: string;
    disbursementSubscriptionKey: string;
    targetEnvironment: string;
  };
  /** Every request received, in arrival order. */
  readonly requests: readonly MomoReceivedRequest[];
  /** Every callback delivery, in the order they were answered (or gave up). */
  readonly callbacks: readonly MomoCallbackDelivery[];
  /** The request with this X-Reference-Id, as GET would answer it. */
  resource(product: MomoProduct, referenceId: string): MomoResource | undefined;
  /** Every request created for a product, oldest first. */
  resources(product: MomoProduct): Array<MomoResource & { referenceId: string }>;
  /** Every issued access token stops working, as an expired one does. */
  expireTokens(): void;
  /** The next `count` requests, whatever they are, are answered `status` with MTN's error body. */
  failNext(count: number, status: 500 | 503): void;
  /** A delay before every answer from now on. */
  setLatency(ms: number): void;
  /** Resolves once `count` callbacks (about one externalId, when given) have been answered. */
  waitForCallbacks(filter?: {
    externalId?: string;
    count?: number;
    timeoutMs?: number;
  }): Promise<MomoCallbackDelivery[]>;
  /** Resolves once nothing is scheduled: every final status reached, every callback answered. */
  whenIdle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const UUID_V4_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const MSISDN_PATTERN = /^\d{8,15}$/;
const AMOUNT_PATTERN = /^\d+(?:\.\d+)?$/;
const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** The error bodies MTN's gateway (Azure API Management) and platform answer with. */
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
const ERROR_BODY_OF_STATUS: Record<500 | 503, { code: string; message: string }> = {
  500: { code: 'INTERNAL_PROCESSING_ERROR', message: 'An internal error occurred while processing.' },
  503: { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable, try again later.' },
};

interface StoredRequest {
  product: MomoProduct;
  referenceId: string;
  resource: MomoResource;
  callbackUrl?: string;
}

interface Route {
  product: MomoProduct;
  action: 'token' | 'create' | 'read';
  referenceId?: string;
}

const ROUTES: Array<{ pattern: RegExp; method: string; action: Route['action'] }> = [
  { pattern: /^\/(collection|disbursement)\/token\/?$/, method: 'POST', action: 'token' },
  { pattern: /^\/(collection)\/v1_0\/requesttopay$/, method: 'POST', action: 'create' },
  { pattern: /^\/(collection)\/v1_0\/requesttopay\/([^/]+)$/, method: 'GET', action: 'read' },
  { pattern: /^\/(disbursement)\/v1_0\/transfer$/, method: 'POST', action: 'create' },
  { pattern: /^\/(disbursement)\/v1_0\/transfer\/([^/]+)$/, method: 'GET', action: 'read' },
];

function routeOf(method: string, pathname: string): Route | undefined {
  for (const route of ROUTES) {
    const match = route.pattern.exec(pathname);
    if (match && method === route.method) {
      const referenceId = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
      return { product: match[1] as MomoProduct, action: route.action, referenceId };
    }
  }
  return undefined;
}

/** The party a product's request names: the payer of a request-to-pay, the payee of a transfer. */
function partyKeyOf(product: MomoProduct): 'payer' | 'payee' {
  return product === 'collection' ? 'payer' : 'payee';
}

/** A request's body in the order MTN's reference shows its fields. */
function presented(resource: MomoResource): MomoResource {
  const { amount, currency, financialTransactionId, externalId, payer, payee, payerMessage, payeeNote } =
    resource;
  return {
    amount,
    currency,
    ...(financialTransactionId === undefined ? {} : { financialTransactionId }),
    externalId,
    ...(payer === undefined ? {} : { payer }),
    ...(payee === undefined ? {} : { payee }),
    ...(payerMessage === undefined ? {} : { payerMessage }),
    ...(payeeNote === undefined ? {} : { payeeNote }),
    status: resource.status,
    ...(resource.reason === undefined ? {} : { reason: resource.reason }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > REQUEST_BODY_MAX_BYTES) {
        reject(new Error('request body too large'));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Answer = { status: number; body?: unknown };

export async function startMomoSimulator(options: MomoSimulatorOptions = {}): Promise<MomoSimulator> {
  const credentials = {
    apiUser: options.apiUser ?? '6f1c8a0e-3b7d-4c2a-9e5f-0a1b2c3d4e5f',
    apiKey: options.apiKey ?? 'momo-simulator-api-key',
    collectionSubscriptionKey: options.collectionSubscriptionKey ?? 'momo-simulator-collection-key',
    disbursementSubscriptionKey: options.disbursementSubscriptionKey ?? 'momo-simulator-disbursement-key',
    targetEnvironment: options.targetEnvironment ?? 'sandbox',
  };
  const subscriptionKeys: Record<MomoProduct, string> = {
    collection: credentials.collectionSubscriptionKey,
    disbursement: credentials.disbursementSubscriptionKey,
  };
  const tokenLifetimeSeconds = options.tokenLifetimeSeconds ?? MOMO_SIMULATOR_TOKEN_LIFETIME_SECONDS;
  const processingMs = options.processingMs ?? MOMO_SIMULATOR_PROCESSING_MS;
  const delayedSettlementMs = options.delayedSettlementMs ?? SANDBOX_DELAYED_SETTLEMENT_MS;
  const lateCallbackDelayMs = options.lateCallbackDelayMs ?? MOMO_SIMULATOR_LATE_CALLBACK_DELAY_MS;
  const callbackMethod = options.callbackMethod ?? 'PUT';
  let latencyMs = options.latencyMs ?? 0;

  const requests: MomoReceivedRequest[] = [];
  const callbacks: MomoCallbackDelivery[] = [];
  const stored = new Map<string, StoredRequest>();
  const tokens = new Map<string, { product: MomoProduct; expiresAt: number }>();
  const failures: Array<500 | 503> = [];
  const timers = new Set<NodeJS.Timeout>();
  /** Scheduled finalizations and callbacks in flight: the simulator is idle when none are left. */
  let busy = 0;
  const listeners = new Set<() => void>();
  let financialTransactionSequence = 0;
  let closed = false;

  const notify = () => {
    for (const listener of [...listeners]) listener();
  };
  const keyOf = (product: MomoProduct, referenceId: string) => `${product}:${referenceId}`;

  /** Runs `task` after `ms`, counting it as scheduled work until it (and its callbacks) are done. */
  const schedule = (ms: number, task: () => Promise<void> | void) => {
    busy += 1;
    const timer = setTimeout(async () => {
      timers.delete(timer);
      try {
        await task();
      } finally {
        busy -= 1;
        notify();
      }
    }, ms);
    timers.add(timer);
  };

  const deliver = async (entry: StoredRequest, body: string) => {
    if (entry.callbackUrl === undefined || closed) return;
    const delivery: MomoCallbackDelivery = {
      product: entry.product,
      referenceId: entry.referenceId,
      externalId: entry.resource.externalId,
      url: entry.callbackUrl,
      method: callbackMethod,
      body,
      at: Date.now(),
    };
    try {
      const response = await fetch(entry.callbackUrl, {
        method: callbackMethod,
        headers: { 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout(MOMO_SIMULATOR_CALLBACK_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      delivery.status = response.status;
    } catch (error) {
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    callbacks.push(delivery);
  };

  const finalize = (entry: StoredRequest, reason: string | undefined) => {
    if (reason === undefined) {
      financialTransactionSequence += 1;
      entry.resource.status = 'SUCCESSFUL';
      entry.resource.financialTransactionId = String(1_700_000_000 + financialTransactionSequence);
    } else {
      entry.resource.status = 'FAILED';
      entry.resource.reason = reason;
    }
  };

  /** Moves a freshly created request towards its outcome, as its number says. */
  const advance = (entry: StoredRequest, behaviour: MomoSimulatorBehaviour) => {
    const body = () => JSON.stringify(presented(entry.resource));
    switch (behaviour.kind) {
      case 'stay_pending':
        return;
      case 'fail':
        schedule(processingMs, async () => {
          finalize(entry, behaviour.reasons[entry.product]);
          await deliver(entry, body());
        });
        return;
      case 'succeed_after_delay':
        schedule(delayedSettlementMs, async () => {
          finalize(entry, undefined);
          await deliver(entry, body());
        });
        return;
      case 'duplicate_callback':
        schedule(processingMs, async () => {
          finalize(entry, undefined);
          await deliver(entry, body());
          await deliver(entry, body());
        });
        return;
      case 'late_callback':
        schedule(processingMs, () => {
          finalize(entry, undefined);
          schedule(lateCallbackDelayMs, () => deliver(entry, body()));
        });
        return;
      case 'malformed_callback':
        schedule(processingMs, async () => {
          finalize(entry, undefined);
          const whole = body();
          await deliver(entry, whole.slice(0, Math.floor(whole.length / 2)));
        });
        return;
      case 'no_callback':
        schedule(processingMs, () => finalize(entry, undefined));
        return;
      default:
        schedule(processingMs, async () => {
          finalize(entry, undefined);
          await deliver(entry, body());
        });
    }
  };

  const authorizeBearer = (product: MomoProduct, header: string | undefined): boolean => {
    const token = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
    const issued = token === undefined ? undefined : tokens.get(token);
    return issued !== undefined && issued.product === product && issued.expiresAt > Date.now();
  };

  const issueToken = (product: MomoProduct, header: string | undefined): Answer => {
    const expected = `Basic ${Buffer.from(`${credentials.apiUser}:${credentials.apiKey}`).toString('base64')}`;
    if (header !== expected) return { status: 401, body: { error: 'login_failed' } };
    const accessToken = randomBytes(24).toString('base64url');
    tokens.set(accessToken, { product, expiresAt: Date.now() + tokenLifetimeSeconds * 1000 });
    return {
      status: 200,
      body: { access_token: accessToken, token_type: 'access_token', expires_in: tokenLifetimeSeconds },
    };
  };

  /** Checks a create request's headers and body as MTN does; returns a refusal, or the request to store. */
  const validateCreate = (
    product: MomoProduct,
    headers: http.IncomingHttpHeaders,
    text: string,
  ): Answer | { referenceId: string; resource: MomoResource; callbackUrl?: string } => {
    const referenceId = headers['x-reference-id'];
    if (typeof referenceId !== 'string' || !UUID_V4_PATTERN.test(referenceId)) {
      return { status: 400, body: { message: 'X-Reference-Id must be a UUID version 4.' } };
    }
    const callbackHeader = headers['x-callback-url'];
    let callbackUrl: string | undefined;
    if (callbackHeader !== undefined) {
      const value = Array.isArray(callbackHeader) ? callbackHeader[0] : callbackHeader;
      let parsed: URL | undefined;
      try {
        parsed = value ? new URL(value) : undefined;
      } catch {
        parsed = undefined;
      }
      if (!parsed || !/^https?:$/.test(parsed.protocol)) {
        return { status: 400, body: { message: 'X-Callback-Url is not an absolute http(s) URL.' } };
      }
      if (options.providerCallbackHost !== undefined && parsed.hostname !== options.providerCallbackHost) {
        return {
          status: 500,
          body: {
            code: 'INVALID_CALLBACK_URL_HOST',
            message: 'Callback URL with different host name than configured for the API user.',
          },
        };
      }
      callbackUrl = parsed.toString();
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { status: 400, body: { message: 'The request body is not JSON.' } };
    }
    if (!isRecord(body)) return { status: 400, body: { message: 'The request body is not an object.' } };
    const { amount, currency, externalId, payerMessage, payeeNote } = body;
    if (typeof amount !== 'string' || !AMOUNT_PATTERN.test(amount) || !/[1-9]/.test(amount)) {
      return { status: 400, body: { message: 'amount must be a positive decimal string.' } };
    }
    if (typeof currency !== 'string' || !CURRENCY_PATTERN.test(currency)) {
      return { status: 400, body: { message: 'currency must be an ISO 4217 code.' } };
    }
    if (options.currencies !== undefined && !options.currencies.includes(currency)) {
      return {
        status: 500,
        body: { code: 'INVALID_CURRENCY', message: 'Currency not supported on the requested account.' },
      };
    }
    if (typeof externalId !== 'string' || externalId === '') {
      return { status: 400, body: { message: 'externalId is required.' } };
    }
    for (const [name, value] of [
      ['payerMessage', payerMessage],
      ['payeeNote', payeeNote],
    ] as const) {
      if (value !== undefined && (typeof value !== 'string' || value.length > MOMO_NOTE_MAX_CHARS)) {
        return {
          status: 400,
          body: { message: `${name} must be a string of at most ${MOMO_NOTE_MAX_CHARS} characters.` },
        };
      }
    }
    const partyKey = partyKeyOf(product);
    const party = body[partyKey];
    if (!isRecord(party) || party.partyIdType !== 'MSISDN' || typeof party.partyId !== 'string') {
      return { status: 400, body: { message: `${partyKey} must be {"partyIdType": "MSISDN", "partyId"}.` } };
    }
    if (!MSISDN_PATTERN.test(party.partyId)) {
      // MTN names this case under the not-found reasons: "MSISDN format must include country code".
      return {
        status: 400,
        body: {
          code: product === 'collection' ? 'PAYER_NOT_FOUND' : 'PAYEE_NOT_FOUND',
          message: 'MSISDN format must include country code.',
        },
      };
    }
    const resource: MomoResource = {
      amount,
      currency,
      externalId,
      [partyKey]: { partyIdType: 'MSISDN', partyId: party.partyId },
      ...(typeof payerMessage === 'string' ? { payerMessage } : {}),
      ...(typeof payeeNote === 'string' ? { payeeNote } : {}),
      status: 'PENDING',
    };
    return { referenceId, resource, ...(callbackUrl === undefined ? {} : { callbackUrl }) };
  };

  /** Answers a request, or returns undefined for one left hanging. */
  const answer = (
    method: string,
    pathname: string,
    headers: http.IncomingHttpHeaders,
    text: string,
  ): Answer | undefined => {
    const failure = failures.shift();
    if (failure !== undefined) return { status: failure, body: ERROR_BODY_OF_STATUS[failure] };
    const route = routeOf(method, pathname);
    if (!route) return { status: 404, body: NOT_FOUND_ROUTE_BODY };
    const subscriptionKey = headers['ocp-apim-subscription-key'];
    if (subscriptionKey === undefined) return { status: 401, body: MISSING_SUBSCRIPTION_KEY_BODY };
    if (subscriptionKey !== subscriptionKeys[route.product]) {
      return { status: 401, body: INVALID_SUBSCRIPTION_KEY_BODY };
    }
    if (route.action === 'token') return issueToken(route.product, headers.authorization);
    if (!authorizeBearer(route.product, headers.authorization))
      return { status: 401, body: INVALID_TOKEN_BODY };
    if (headers['x-target-environment'] !== credentials.targetEnvironment) {
      return {
        status: 500,
        body: {
          code: 'NOT_ALLOWED_TARGET_ENVIRONMENT',
          message: 'Access to target environment is forbidden.',
        },
      };
    }
    if (route.action === 'read') {
      const entry = stored.get(keyOf(route.product, route.referenceId ?? ''));
      return entry
        ? { status: 200, body: presented(entry.resource) }
        : { status: 404, body: { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' } };
    }
    const checked = validateCreate(route.product, headers, text);
    if ('status' in checked) return checked;
    const key = keyOf(route.product, checked.referenceId);
    if (stored.has(key)) {
      return {
        status: 409,
        body: {
          code: 'RESOURCE_ALREADY_EXIST',
          message: 'Duplicated reference id. Creation of resource failed.',
        },
      };
    }
    const party = checked.resource[partyKeyOf(route.product)];
    const behaviour = MOMO_SIMULATOR_NUMBERS[`+${party?.partyId}`]?.behaviour ?? { kind: 'succeed' };
    if (behaviour.kind === 'server_error') {
      return { status: behaviour.status, body: ERROR_BODY_OF_STATUS[behaviour.status] };
    }
    if (behaviour.kind === 'hang') return undefined;
    const refusal = behaviour.kind === 'refuse_on_post' ? behaviour.reasons[route.product] : undefined;
    if (refusal !== undefined)
      return { status: 500, body: { code: refusal, message: `Refused: ${refusal}.` } };
    const entry: StoredRequest = { product: route.product, ...checked };
    stored.set(key, entry);
    advance(entry, behaviour);
    return { status: 202 };
  };

  const server = http.createServer(async (request, response) => {
    const record: MomoReceivedRequest = {
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      headers: request.headers,
      body: '',
      status: 0,
      at: Date.now(),
    };
    requests.push(record);
    try {
      record.body = await readBody(request);
    } catch {
      record.status = 413;
      response.writeHead(413).end();
      return;
    }
    if (latencyMs > 0) await sleep(latencyMs);
    const pathname = new URL(record.path, 'http://simulator.invalid').pathname;
    const result = answer(record.method, pathname, request.headers, record.body);
    if (result === undefined) return; // hangs until the client gives up or the simulator closes
    record.status = result.status;
    if (result.body === undefined) {
      response.writeHead(result.status).end();
    } else {
      response
        .writeHead(result.status, { 'Content-Type': 'application/json;charset=utf-8' })
        .end(JSON.stringify(result.body));
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the simulator has no TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const waitUntil = <T>(ready: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const value = ready();
        if (value === undefined) return false;
        listeners.delete(check);
        clearTimeout(timer);
        resolve(value);
        return true;
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`MoMo simulator: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });

  return {
    url: `http://${host}:${address.port}`,
    credentials,
    requests,
    callbacks,
    resource: (product, referenceId) => {
      const entry = stored.get(keyOf(product, referenceId));
      return entry ? presented(structuredClone(entry.resource)) : undefined;
    },
    resources: (product) =>
      [...stored.values()]
        .filter((entry) => entry.product === product)
        .map((entry) => ({ ...presented(structuredClone(entry.resource)), referenceId: entry.referenceId })),
    expireTokens: () => tokens.clear(),
    failNext: (count, status) => {
      for (let i = 0; i < count; i += 1) failures.push(status);
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    waitForCallbacks: ({ externalId, count = 1, timeoutMs = MOMO_SIMULATOR_WAIT_TIMEOUT_MS } = {}) => {
      const matching = () =>
        callbacks.filter((delivery) => externalId === undefined || delivery.externalId === externalId);
      return waitUntil(
        () => {
          const found = matching();
          return found.length >= count ? found : undefined;
        },
        timeoutMs,
        `${count} callback(s)${externalId === undefined ? '' : ` about ${externalId}`}`,
      );
    },
    whenIdle: async (timeoutMs = MOMO_SIMULATOR_WAIT_TIMEOUT_MS) => {
      await waitUntil(() => (busy === 0 ? true : undefined), timeoutMs, 'scheduled work to finish');
    },
    close: () => {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
