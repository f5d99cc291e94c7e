/**
 * Fireblocks' webhooks v2 signature ("Validating webhooks", docs/rails/fireblocks.md#webhooks):
 * `Fireblocks-Webhook-Signature` is a detached JWS, `<header>..<signature>`, RS512 over
 * `<header>.<base64url(raw body)>`, its key named by `kid` in the header and published in Fireblocks' JWKS.
 *
 * The JWKS is fetched through the outbound address guard's fetch and kept per URL (at most
 * FIREBLOCKS_JWKS_SETS_MAX sets of FIREBLOCKS_JWKS_KEYS_MAX keys) for FIREBLOCKS_JWKS_MAX_AGE_MS, Fireblocks'
 * published `max-age`. A `kid` the cached set lacks refetches it, at most once every
 * FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS per URL, and after a failed fetch none is tried again for as long:
 * a forger sending made-up `kid`s, or webhooks arriving while the JWKS is down, cannot make us fetch on every
 * request (those in between are answered "try again later", which Fireblocks' retries absorb). A set past its
 * age whose refetch fails keeps serving the keys it has.
 */
import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { isRecord } from '../../../../domain/json.ts';
import type { OutboundFetch } from '../../../../outbound/guard.ts';
import { CallbackVerificationUnavailableError, MalformedCallbackError } from '../../../../rails/partner.ts';

/**
 * Which webhook signatures a configuration accepts: `v1` (`Fireblocks-Signature` with the configured PEM
 * key, the default), `v2` (`Fireblocks-Webhook-Signature` against the JWKS only), or `v1_or_v2` (v2 where
 * the webhook carries it, else v1; v1 also when the JWKS cannot be fetched): Fireblocks sends both during
 * its migration.
 */
export const FIREBLOCKS_WEBHOOK_SIGNATURES = ['v1', 'v2', 'v1_or_v2'] as const;
export type FireblocksWebhookSignatures = (typeof FIREBLOCKS_WEBHOOK_SIGNATURES)[number];

/** US production's JWKS, as "Validating webhooks" lists it; other regions and the sandbox set their own URL. */
export const FIREBLOCKS_JWKS_URL = 'https://keys.fireblocks.io/.well-known/jwks.json';
/** How long a fetched key set is used: the published `Cache-Control: max-age=3600`. */
export const FIREBLOCKS_JWKS_MAX_AGE_MS = 3_600_000;
/** Fetches a `kid` the cached set lacks may cause, at most one per this interval per JWKS URL. */
export const FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS = 60_000;
/** Keys kept of one set (Fireblocks publishes one or two during a rotation). */
export const FIREBLOCKS_JWKS_KEYS_MAX = 20;
/** JWKS URLs cached per process (one per region in use). */
export const FIREBLOCKS_JWKS_SETS_MAX = 16;
/** Time limit of one JWKS fetch. */
export const FIREBLOCKS_JWKS_TIMEOUT_MS = 5_000;
/** The only algorithm Fireblocks signs webhooks with; any other (`none`, `HS256`, …) is refused. */
const FIREBLOCKS_WEBHOOK_JWS_ALG = 'RS512';
/** Characters of a signature header at most (a 4096-bit signature and a short header are far below). */
const JWS_HEADER_CHARS_MAX = 4_096;
/** RSA keys shorter than this are not believed. */
const RSA_MODULUS_BITS_MIN = 2_048;

interface KeySet {
  keys: Map<string, KeyObject>;
  fetchedAt: number;
}

/** Fetched key sets by URL, with when each was last refetched for an unknown `kid`, or last failed. */
export class FireblocksJwksCache {
  private readonly sets = new Map<string, KeySet>();
  private readonly refreshedAt = new Map<string, number>();
  private readonly failedAt = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<KeySet>>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The key named `kid`, from the cached set or a refetch; undefined when the fresh set lacks it too. */
  async key(fetch: OutboundFetch, url: string, kid: string): Promise<KeyObject | undefined> {
    const cached = this.sets.get(url);
    const fresh = cached !== undefined && this.now() - cached.fetchedAt < FIREBLOCKS_JWKS_MAX_AGE_MS;
    if (fresh && cached.keys.has(kid)) return cached.keys.get(kid);
    if (fresh) {
      // A kid the fresh set lacks: a rotation, or a forger's; refetched at most once an interval.
      const last = this.refreshedAt.get(url);
      if (last !== undefined && this.now() - last < FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS) {
        throw new CallbackVerificationUnavailableError(
          `Fireblocks' key ${kid} is not in its key set, refetched moments ago`,
        );
      }
      this.refreshedAt.set(url, this.now());
    }
    const failed = this.failedAt.get(url);
    if (failed !== undefined && this.now() - failed < FIREBLOCKS_JWKS_REFRESH_MIN_INTERVAL_MS) {
      if (cached?.keys.has(kid)) return cached.keys.get(kid);
      throw new CallbackVerificationUnavailableError(`Fireblocks' JWKS could not be fetched moments ago`);
    }
    try {
      return (await this.load(fetch, url)).keys.get(kid);
    } catch (error) {
      this.failedAt.set(url, this.now());
      // A set past its age still names the keys it had: better than refusing every webhook while it is down.
      if (cached?.keys.has(kid)) return cached.keys.get(kid);
      throw error;
    }
  }

  private load(fetch: OutboundFetch, url: string): Promise<KeySet> {
    const pending = this.inFlight.get(url);
    if (pending) return pending;
    const loading = fetchKeySet(fetch, url, this.now).then(
      (set) => {
        this.inFlight.delete(url);
        this.failedAt.delete(url);
        this.sets.delete(url);
        if (this.sets.size >= FIREBLOCKS_JWKS_SETS_MAX) {
          const oldest = this.sets.keys().next().value;
          if (oldest !== undefined) this.sets.delete(oldest);
        }
        this.sets.set(url, set);
        return set;
      },
      (error: unknown) => {
        this.inFlight.delete(url);
        throw error;
      },
    );
    this.inFlight.set(url, loading);
    return loading;
  }
}

/** The process's key sets, shared by every Fireblocks configuration. */
export const fireblocksJwksCache = new FireblocksJwksCache();

async function fetchKeySet(fetch: OutboundFetch, url: string, now: () => number): Promise<KeySet> {
  let body: unknown;
  try {
    const response = await fetch(url, {
      method: 'GET',
      headers: { Accept: 'application/json' },
      signal: AbortSignal.timeout(FIREBLOCKS_JWKS_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    body = await response.json();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CallbackVerificationUnavailableError(`Fireblocks' JWKS could not be fetched: ${why}`);
  }
  const keys = new Map<string, KeyObject>();
  const listed = isRecord(body) && Array.isArray(body.keys) ? body.keys : [];
  for (const jwk of listed) {
    if (keys.size >= FIREBLOCKS_JWKS_KEYS_MAX) break;
    const key = signingKeyOf(jwk);
    if (key) keys.set(key.kid, key.key);
  }
  return { keys, fetchedAt: now() };
}

/** An RSA signing key of RS512 (or no stated algorithm), at least RSA_MODULUS_BITS_MIN bits; else undefined. */
function signingKeyOf(jwk: unknown): { kid: string; key: KeyObject } | undefined {
  if (!isRecord(jwk) || jwk.kty !== 'RSA' || typeof jwk.kid !== 'string') return undefined;
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  if (jwk.alg !== undefined && jwk.alg !== FIREBLOCKS_WEBHOOK_JWS_ALG) return undefined;
  if (typeof jwk.n !== 'string' || typeof jwk.e !== 'string') return undefined;
  try {
    const key = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits >= RSA_MODULUS_BITS_MIN ? { kid: jwk.kid, key } : undefined;
  } catch {
    return undefined;
  }
}

/** The protected header of a detached JWS, checked: RS512, a `kid`, the payload base64url-encoded. */
function protectedHeader(jws: string): { encoded: string; signature: string; kid: string } {
  const parts = jws.length <= JWS_HEADER_CHARS_MAX ? jws.split('.') : [];
  const [encoded = '', payload, signature = ''] = parts;
  if (parts.length !== 3 || payload !== '' || encoded === '' || signature === '') {
    throw new MalformedCallbackError(
      'Fireblocks-Webhook-Signature is not a detached JWS (header..signature)',
    );
  }
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
  } catch {
    throw new MalformedCallbackError('The Fireblocks webhook JWS header is not JSON');
  }
  if (!isRecord(header) || header.alg !== FIREBLOCKS_WEBHOOK_JWS_ALG) {
    throw new MalformedCallbackError(`The Fireblocks webhook JWS is not ${FIREBLOCKS_WEBHOOK_JWS_ALG}`);
  }
  // An unencoded payload (RFC 7797's b64: false) or any critical extension is not Fireblocks'.
  if (header.b64 !== undefined || header.crit !== undefined) {
    throw new MalformedCallbackError('The Fireblocks webhook JWS has extensions Fireblocks does not use');
  }
  if (typeof header.kid !== 'string' || header.kid === '') {
    throw new MalformedCallbackError('The Fireblocks webhook JWS names no key (kid)');
  }
  return { encoded, signature, kid: header.kid };
}

/**
 * Verifies `Fireblocks-Webhook-Signature` over the raw body. Throws MalformedCallbackError for a signature
 * that does not verify (or names a key the published set does not have, freshly fetched), and
 * CallbackVerificationUnavailableError when the key set cannot be had now.
 */
export async function verifyFireblocksWebhookJws(
  cache: FireblocksJwksCache,
  fetch: OutboundFetch,
  jwksUrl: string,
  jws: string,
  rawBody: string,
): Promise<void> {
  const { encoded, signature, kid } = protectedHeader(jws);
  const key = await cache.key(fetch, jwksUrl, kid);
  if (!key) throw new MalformedCallbackError(`Fireblocks publishes no key ${kid}`);
  const signingInput = Buffer.from(`${encoded}.${Buffer.from(rawBody, 'utf8').toString('base64url')}`);
  if (!verify('sha512', signingInput, key, Buffer.from(signature, 'base64url'))) {
    throw new MalformedCallbackError('The Fireblocks webhook JWS does not verify');
  }
}
