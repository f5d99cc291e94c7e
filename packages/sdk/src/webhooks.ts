/**
 * Verifying Mkoba webhook deliveries.
 *
 *   Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>[,v1=…]
 *   Service-Event-Id:  evt_…
 *
 * The construction is Stripe's: the HMAC key is the endpoint secret string exactly as issued (`whsec_…`),
 * and during a secret rotation the header carries one `v1` per active secret. A delivery is accepted when
 * any `v1` matches any secret you hold, compared in constant time, and its timestamp is within the
 * tolerance of your clock, in the past or the future.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Event, PayloadFormat } from './generated.ts';

export const WEBHOOK_SIGNATURE_HEADER = 'Service-Signature';
export const WEBHOOK_EVENT_ID_HEADER = 'Service-Event-Id';
/** How far a signature's timestamp may be from your clock, either way, by default. */
export const WEBHOOK_TOLERANCE_SECONDS_DEFAULT = 300;

const SIGNATURE_SCHEME = 'v1';
const HEX_SHA256_CHARS = 64;
const TIMESTAMP_PATTERN = /^[0-9]{1,15}$/;

/** Why a delivery was refused. */
export type WebhookVerificationReason =
  /** No `Service-Signature` header: the request is unsigned. */
  | 'missing_header'
  /** The header is not `t=<seconds>,v1=<hex>[,v1=<hex>…]`. */
  | 'malformed_header'
  /** No `v1` matches any of your secrets: a wrong secret, a changed body, or a forgery. */
  | 'no_matching_signature'
  /** Authentic, but signed too long ago or too far in the future (a replay, or a clock far off). */
  | 'timestamp_outside_tolerance'
  /** Authentic, but the body is not a JSON event, or `Service-Event-Id` disagrees with its `id`. */
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Anything with a case-insensitive `get`, such as the Fetch API's `Headers`. */
export interface HeaderGetter {
  get(name: string): string | null;
}

/** Node's `IncomingHttpHeaders`, Express's and Fastify's `request.headers`, a plain object, or `Headers`. */
export type WebhookHeaders = Record<string, string | string[] | undefined> | HeaderGetter;

export interface VerifyWebhookOptions {
  /** Seconds a signature's timestamp may be from `now`, either way. Default 300. */
  toleranceSeconds?: number;
  /** The current time, as a `Date` or milliseconds since the epoch. Default: the system clock. */
  now?: Date | number;
  /**
   * The spelling to return the event in: `camel_case` gives camelCase field names whichever spelling was
   * delivered (a `snake_case` subscription, `mkoba listen` without `--payload-format`), as a `camel_case`
   * subscription delivers them. Default: as delivered.
   */
  payloadFormat?: PayloadFormat;
}

function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The camelCase spelling of a payload, by the service's own rule: every field name but `metadata`'s keys. */
export function toCamelCase(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => toCamelCase(item));
  if (value === null || typeof value !== 'object') return value;
  if (key === 'metadata') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camelKey(k), toCamelCase(v, k)]));
}

/**
 * Verifies a delivery and returns its event. Pass the raw request body exactly as received (before any JSON
 * parsing), the request headers, and your endpoint secret, or several secrets while you rotate.
 *
 * @throws WebhookVerificationError with a `reason` when the delivery must be refused.
 */
export function verifyWebhook<T = Event>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secretOrSecrets: string | readonly string[],
  options: VerifyWebhookOptions = {},
): T {
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError(
      'verifyWebhook needs the raw request body as a string or Buffer, not a parsed object: ' +
        'the signature covers the exact bytes that were sent.',
    );
  }
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : [...secretOrSecrets];
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret === '')) {
    throw new TypeError('verifyWebhook needs your endpoint secret (whsec_…), or a non-empty list of them.');
  }
  const toleranceSeconds = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS_DEFAULT;
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError('toleranceSeconds must be a finite number of seconds, zero or more.');
  }
  const nowMs = options.now === undefined ? Date.now() : Number(options.now);
  if (!Number.isFinite(nowMs))
    throw new TypeError('now must be a valid Date or milliseconds since the epoch.');

  const header = singleHeader(headers, WEBHOOK_SIGNATURE_HEADER);
  if (header === undefined || header?.trim() === '') {
    throw new WebhookVerificationError(
      'missing_header',
      `The ${WEBHOOK_SIGNATURE_HEADER} header is missing.`,
    );
  }
  const parsed = header === null ? null : parseSignatureHeader(header);
  if (!parsed) {
    throw new WebhookVerificationError(
      'malformed_header',
      `The ${WEBHOOK_SIGNATURE_HEADER} header is not "t=<unix seconds>,v1=<hex>[,v1=<hex>…]".`,
    );
  }
  const matched = secrets.some((secret) => {
    const expected = Buffer.from(signature(rawBody, secret, parsed.timestampSeconds), 'utf8');
    return parsed.signatures.some((candidate) => constantTimeEqual(expected, candidate));
  });
  if (!matched) {
    throw new WebhookVerificationError(
      'no_matching_signature',
      'No signature matches: check the endpoint secret, and pass the raw body exactly as received.',
    );
  }
  const skewSeconds = Math.floor(nowMs / 1000) - parsed.timestampSeconds;
  if (Math.abs(skewSeconds) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `The signature was made ${Math.abs(skewSeconds)} s ${skewSeconds > 0 ? 'ago' : 'in the future'}; ` +
        `the tolerance is ${toleranceSeconds} s.`,
    );
  }

  const event = parseEvent(rawBody);
  const eventIdHeader = singleHeader(headers, WEBHOOK_EVENT_ID_HEADER);
  if (eventIdHeader !== undefined && eventIdHeader !== event.id) {
    throw new WebhookVerificationError(
      'invalid_payload',
      `The ${WEBHOOK_EVENT_ID_HEADER} header does not equal the event id.`,
    );
  }
  return (options.payloadFormat === 'camel_case' ? toCamelCase(event) : event) as T;
}

/**
 * Builds a `Service-Signature` value the way Mkoba does, for your own tests (a delivery to your endpoint
 * from a test, or a local replay). One `v1` per secret.
 */
export function signWebhook(
  rawBody: string | Uint8Array,
  secretOrSecrets: string | readonly string[],
  timestampSeconds: number = Math.floor(Date.now() / 1000),
): string {
  const secrets = typeof secretOrSecrets === 'string' ? [secretOrSecrets] : [...secretOrSecrets];
  if (secrets.length === 0 || secrets.some((secret) => secret === '')) {
    throw new TypeError('signWebhook needs at least one non-empty secret.');
  }
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError('timestampSeconds must be whole seconds since the epoch.');
  }
  const signatures = secrets.map(
    (secret) => `${SIGNATURE_SCHEME}=${signature(rawBody, secret, timestampSeconds)}`,
  );
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}

function signature(rawBody: string | Uint8Array, secret: string, timestampSeconds: number): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(rawBody).digest('hex');
}

function constantTimeEqual(expected: Buffer, candidate: string): boolean {
  if (candidate.length !== HEX_SHA256_CHARS) return false;
  const actual = Buffer.from(candidate, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

interface ParsedHeader {
  timestampSeconds: number;
  signatures: string[];
}

/** Exactly one `t` of decimal digits and at least one `v1`; other schemes are ignored, as Stripe does. */
function parseSignatureHeader(header: string): ParsedHeader | null {
  let timestampSeconds: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) return null;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestampSeconds !== null || !TIMESTAMP_PATTERN.test(value)) return null;
      timestampSeconds = Number(value);
    } else if (key === SIGNATURE_SCHEME) {
      signatures.push(value);
    }
  }
  if (timestampSeconds === null || signatures.length === 0) return null;
  return { timestampSeconds, signatures };
}

/**
 * One header's value, looked up without regard to case. `undefined` when absent; `null` when it was sent
 * more than once with different values (which a verifier must not guess about).
 */
function singleHeader(headers: WebhookHeaders, name: string): string | null | undefined {
  if (typeof (headers as HeaderGetter).get === 'function') {
    return (headers as HeaderGetter).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const lower = name.toLowerCase();
  let value = record[lower];
  if (value === undefined) {
    const key = Object.keys(record).find((k) => k.toLowerCase() === lower);
    value = key === undefined ? undefined : record[key];
  }
  if (Array.isArray(value)) {
    const distinct = [...new Set(value)];
    if (distinct.length === 0) return undefined;
    return distinct.length === 1 ? (distinct[0] as string) : null;
  }
  return value;
}

function parseEvent(rawBody: string | Uint8Array): { id: string } {
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8').decode(rawBody);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The body is not JSON.');
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as { id?: unknown }).id !== 'string' ||
    typeof (value as { type?: unknown }).type !== 'string'
  ) {
    throw new WebhookVerificationError('invalid_payload', 'The body is not an event with an id and a type.');
  }
  return value as { id: string };
}
