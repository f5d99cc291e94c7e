/**
 * A connection to Fireblocks' API: its configuration, the per-request JWT Fireblocks authenticates by
 * (RS256 with the API user's private key; claims uri, nonce, iat, exp, sub, bodyHash), and one request
 * through the outbound guard's fetch with a time limit. See docs/rails/fireblocks.md.
 */
import { createHash, createSign, randomUUID } from 'node:crypto';
import { parseJson } from '../../../../domain/json.ts';
import type { OutboundFetch } from '../../../../outbound/guard.ts';
import type { FireblocksWebhookSignatures } from './webhookJwks.ts';

/** Fireblocks refuses a token living 30 s or more (its authentication page); 25 s leaves room. */
export const FIREBLOCKS_TOKEN_LIFETIME_SECONDS = 25;
/** Per-request time limit. */
export const FIREBLOCKS_REQUEST_TIMEOUT_MS = 5_000;

export interface FireblocksConfig {
  /** The outbound address guard's fetch (src/outbound/guard.ts). */
  fetch: OutboundFetch;
  /** Ends in `/v1`: `https://api.fireblocks.io/v1`, or a simulator's. */
  baseUrl: string;
  apiKey: string;
  /** The API user's RSA private key, PEM. */
  privateKey: string;
  /** The PEM public key v1 webhooks are verified with (Fireblocks' published key, or a simulator's). */
  webhookPublicKey: string;
  /** The signatures webhooks are accepted with (webhookJwks.ts); `v1` unless given. */
  webhookSignatures?: FireblocksWebhookSignatures;
  /** Where v2's keys are published (FIREBLOCKS_JWKS_URL unless given; a region's, or a simulator's). */
  webhookJwksUrl?: string;
  /** The vault account payouts are sent from. */
  sourceVaultAccountId: string;
  requestTimeoutMs?: number;
}

/** A call to Fireblocks that got no usable answer: the rail worker retries (the externalTxId keeps it safe). */
export class FireblocksError extends Error {
  override name = 'FireblocksError';
}

export interface FireblocksAnswer {
  status: number;
  body: unknown;
  /** The `next-page` response header of a paged list (GET /transactions): the cursor of the page after. */
  nextPage?: string;
}

function base64UrlJson(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The bearer token for one request: `uri` is the path and query under the host, `/v1/…`. */
export function fireblocksToken(
  config: FireblocksConfig,
  uri: string,
  body: string,
  nowSeconds: number,
): string {
  const claims = {
    uri,
    nonce: randomUUID(),
    iat: nowSeconds,
    exp: nowSeconds + FIREBLOCKS_TOKEN_LIFETIME_SECONDS,
    sub: config.apiKey,
    bodyHash: createHash('sha256').update(body).digest('hex'),
  };
  const unsigned = `${base64UrlJson({ alg: 'RS256', typ: 'JWT' })}.${base64UrlJson(claims)}`;
  const signature = createSign('RSA-SHA256').update(unsigned).sign(config.privateKey, 'base64url');
  return `${unsigned}.${signature}`;
}

/** Fireblocks' longest Idempotency-Key ("API Idempotency": at most 40 characters). */
const IDEMPOTENCY_KEY_MAX_CHARS = 40;

/**
 * The Idempotency-Key of a POST that must happen once for a thing of ours (a wallet's vault account): a
 * digest of what it is for, so every process derives the same key, within Fireblocks' 40 characters.
 */
export function fireblocksIdempotencyKey(purpose: string): string {
  return `mkoba-${createHash('sha256').update(purpose).digest('base64url')}`.slice(
    0,
    IDEMPOTENCY_KEY_MAX_CHARS,
  );
}

/**
 * One request; throws FireblocksError when no answer came (a time-out, a network error). A POST with an
 * idempotency key is answered by Fireblocks, for 24 hours, with the first answer under that key.
 */
export async function fireblocksRequest(
  config: FireblocksConfig,
  method: 'GET' | 'POST',
  path: string,
  payload?: object,
  idempotencyKey?: string,
): Promise<FireblocksAnswer> {
  const url = new URL(`${config.baseUrl.replace(/\/+$/, '')}${path}`);
  const body = payload === undefined ? '' : JSON.stringify(payload);
  const token = fireblocksToken(config, `${url.pathname}${url.search}`, body, Math.floor(Date.now() / 1000));
  let response: Response;
  try {
    response = await config.fetch(url.toString(), {
      method,
      headers: {
        'X-API-Key': config.apiKey,
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }),
      },
      body: method === 'GET' ? undefined : body,
      signal: AbortSignal.timeout(config.requestTimeoutMs ?? FIREBLOCKS_REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new FireblocksError(
      `Fireblocks ${method} ${path}: ${error instanceof Error ? error.message : error}`,
    );
  }
  const parsed = parseJson(await response.text());
  const nextPage = response.headers.get('next-page');
  return { status: response.status, body: parsed, ...(nextPage ? { nextPage } : {}) };
}

/** The transaction Fireblocks holds under an externalTxId (a transfer's or a sweep's id), or undefined. */
export async function findByExternalTxId(
  config: FireblocksConfig,
  externalTxId: string,
): Promise<Record<string, unknown> | undefined> {
  const found = await fireblocksRequest(
    config,
    'GET',
    `/transactions/external_tx_id/${encodeURIComponent(externalTxId)}`,
  );
  if (found.status === 404) return undefined;
  const body = found.body;
  if (
    found.status !== 200 ||
    typeof body !== 'object' ||
    body === null ||
    typeof (body as { id?: unknown }).id !== 'string'
  ) {
    throw new FireblocksError(`Fireblocks answered ${found.status} looking up ${externalTxId}`);
  }
  return body as Record<string, unknown>;
}
