/**
 * One MTN MoMo adapter's connection to MTN (rail.ts): its configuration, the error a call throws, each
 * product's access token it caches, and the requests every operation sends through the outbound address
 * guard.
 */

import { isRecord, parseJson } from '../../../../domain/json.ts';
import type { OutboundFetch } from '../../../../outbound/guard.ts';
import type { CallbackTarget } from '../../../../rails/partner.ts';
import { exchangeWithin } from '../exchangeWithin.ts';
import { type MomoProduct, PATHS } from './protocol.ts';

/**
 * One HTTP request's time limit. A call makes at most five requests of this limit (token, POST, a fresh
 * token and the POST again after a 401, GET after a 409), so those end within the rail worker's 20-second
 * RAIL_CALL_TIMEOUT_MS; a payout's account-holder check before them has its own shorter limit
 * (MOMO_ACTIVE_CHECK_TIMEOUT_MS), which the worker's 30-second claim lease covers.
 */
export const MOMO_REQUEST_TIMEOUT_MS = 4_000;
/** MTN's guidance: refresh an access token 10 minutes before it expires (they live 60 minutes). */
export const MOMO_TOKEN_REFRESH_MARGIN_MS = 10 * 60_000;

export interface MtnMomoConfig {
  /**
   * How the adapter calls out: the outbound address guard's fetch (src/outbound/guard.ts), which checks the
   * URL and every address it connects to under the deployment's policy.
   */
  fetch: OutboundFetch;
  /** `https://proxy.momoapi.mtn.com` in production (some markets have their own host), or the sandbox's. */
  baseUrl: string;
  /** X-Target-Environment: `sandbox`, or the market MTN names at onboarding, such as `mtnuganda`. */
  targetEnvironment: string;
  /** The API user's id (a UUID) and its API key: the Basic credentials of POST /{product}/token/. */
  apiUser: string;
  apiKey: string;
  /** Ocp-Apim-Subscription-Key: each product has its own. */
  collectionSubscriptionKey: string;
  disbursementSubscriptionKey: string;
  /** MOMO_REQUEST_TIMEOUT_MS unless given. */
  requestTimeoutMs?: number;
}

/** A call to MTN that did not give a usable answer: the rail worker retries, the message says why. */
export class MtnMomoError extends Error {
  override name = 'MtnMomoError';
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** An answer from MTN: its HTTP status and body. */
export interface MomoAnswer {
  status: number;
  body: unknown;
  /** The error body's code, where it has one. */
  code: string | undefined;
}

interface CachedToken {
  accessToken: string;
  /** When to stop using it (its expiry less the refresh margin), epoch ms. */
  refreshAt: number;
}

/** What one adapter instance holds: its settings, where its callbacks go, and the tokens it caches. */
export interface MomoConnection {
  config: MtnMomoConfig;
  /** MTN's base URL without a trailing slash. */
  baseUrl: string;
  /** The organization's callback base URL, as given. */
  callbackBase: string;
  requestTimeoutMs: number;
  subscriptionKeys: Record<MomoProduct, string>;
  tokens: Map<MomoProduct, CachedToken>;
  /** Token requests under way, so that calls at once share one token. */
  tokenRequests: Map<MomoProduct, Promise<CachedToken>>;
}

export function momoConnection(config: MtnMomoConfig, callbacks: CallbackTarget): MomoConnection {
  return {
    config,
    baseUrl: config.baseUrl.replace(/\/+$/, ''),
    callbackBase: callbacks.baseUrl,
    requestTimeoutMs: config.requestTimeoutMs ?? MOMO_REQUEST_TIMEOUT_MS,
    subscriptionKeys: {
      collection: config.collectionSubscriptionKey,
      disbursement: config.disbursementSubscriptionKey,
    },
    tokens: new Map(),
    tokenRequests: new Map(),
  };
}

/** One HTTP exchange; throws MtnMomoError when there is no answer in time. */
async function exchange(
  connection: MomoConnection,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
  timeoutMs = connection.requestTimeoutMs,
): Promise<MomoAnswer> {
  const { status, text } = await exchangeWithin(
    connection.config.fetch,
    `${connection.baseUrl}${path}`,
    { method, headers, ...(body === undefined ? {} : { body }) },
    timeoutMs,
    (timedOut, error) =>
      new MtnMomoError(
        timedOut
          ? `MTN MoMo did not answer ${method} ${path} within ${timeoutMs} ms`
          : `MTN MoMo ${method} ${path} failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
  );
  const parsed = parseJson(text);
  const code = isRecord(parsed) && typeof parsed.code === 'string' ? parsed.code : undefined;
  return { status, body: parsed, code };
}

/** What an error answer says, for a message: MTN's code, or its gateway's message. */
export function describe(answer: MomoAnswer): string {
  const body = answer.body;
  const detail =
    answer.code ??
    (isRecord(body) && typeof body.error === 'string' ? body.error : undefined) ??
    (isRecord(body) && typeof body.message === 'string' ? body.message : undefined);
  return detail === undefined ? `HTTP ${answer.status}` : `HTTP ${answer.status}: ${detail}`;
}

async function requestToken(connection: MomoConnection, product: MomoProduct): Promise<CachedToken> {
  const basic = Buffer.from(`${connection.config.apiUser}:${connection.config.apiKey}`, 'utf8').toString(
    'base64',
  );
  const answer = await exchange(connection, 'POST', PATHS[product].token, {
    Authorization: `Basic ${basic}`,
    'Ocp-Apim-Subscription-Key': connection.subscriptionKeys[product],
  });
  if (answer.status === 401) {
    throw new MtnMomoError(
      `MTN MoMo refused the ${product} credentials (the API user and key, or the product's subscription key): ${describe(answer)}`,
      answer.status,
      answer.code,
    );
  }
  const body = answer.body;
  if (
    answer.status !== 200 ||
    !isRecord(body) ||
    typeof body.access_token !== 'string' ||
    typeof body.expires_in !== 'number'
  ) {
    throw new MtnMomoError(`MTN MoMo gave no ${product} access token: ${describe(answer)}`, answer.status);
  }
  const lifetimeMs = body.expires_in * 1000;
  // A token shorter-lived than the margin is still used for half its life rather than never.
  const margin = Math.min(MOMO_TOKEN_REFRESH_MARGIN_MS, lifetimeMs / 2);
  return { accessToken: body.access_token, refreshAt: Date.now() + lifetimeMs - margin };
}

async function tokenFor(connection: MomoConnection, product: MomoProduct): Promise<CachedToken> {
  const { tokens, tokenRequests } = connection;
  const cached = tokens.get(product);
  if (cached && cached.refreshAt > Date.now()) return cached;
  let pending = tokenRequests.get(product);
  if (!pending) {
    pending = requestToken(connection, product).finally(() => tokenRequests.delete(product));
    tokenRequests.set(product, pending);
  }
  const token = await pending;
  tokens.set(product, token);
  return token;
}

/**
 * An API call with the product's bearer token; a 401 gets a fresh token and one more try. `timeoutMs` limits
 * the call's own requests (not the token's): the connection's requestTimeoutMs unless given.
 */
export async function authorized(
  connection: MomoConnection,
  product: MomoProduct,
  method: 'GET' | 'POST',
  path: string,
  extraHeaders: Record<string, string> = {},
  body?: string,
  timeoutMs = connection.requestTimeoutMs,
): Promise<MomoAnswer> {
  for (let attempt = 1; ; attempt += 1) {
    const token = await tokenFor(connection, product);
    const answer = await exchange(
      connection,
      method,
      path,
      {
        Authorization: `Bearer ${token.accessToken}`,
        'X-Target-Environment': connection.config.targetEnvironment,
        'Ocp-Apim-Subscription-Key': connection.subscriptionKeys[product],
        ...extraHeaders,
      },
      body,
      timeoutMs,
    );
    if (answer.status !== 401) return answer;
    if (connection.tokens.get(product) === token) connection.tokens.delete(product);
    if (attempt === 2) {
      throw new MtnMomoError(
        `MTN MoMo refused a fresh ${product} access token: ${describe(answer)}`,
        answer.status,
        answer.code,
      );
    }
  }
}

/** GET a request by its X-Reference-Id: its body, or undefined when MTN does not know it (404). */
export async function fetchResource(
  connection: MomoConnection,
  product: MomoProduct,
  referenceId: string,
): Promise<Record<string, unknown> | undefined> {
  const path = `${PATHS[product].resource}/${encodeURIComponent(referenceId)}`;
  const answer = await authorized(connection, product, 'GET', path);
  if (answer.status === 404) return undefined;
  if (answer.status !== 200 || !isRecord(answer.body)) {
    throw new MtnMomoError(
      `MTN MoMo answered GET ${path} with ${describe(answer)}`,
      answer.status,
      answer.code,
    );
  }
  return answer.body;
}
