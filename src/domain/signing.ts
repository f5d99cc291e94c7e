/**
 * Webhook signing secrets and signatures (spec 5.2), built exactly as Stripe builds them, so any
 * Stripe-style verifier accepts ours:
 *
 *   Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + raw body)>[,v1=…]
 *
 * The HMAC key is the secret string exactly as issued (the UTF-8 bytes of the whole `whsec_…` string),
 * which is what Stripe's own verifier does with the secret it is given. During a rotation the header carries
 * one `v1` per active secret, so a receiver holding either secret accepts it. Each delivery attempt is
 * signed afresh with its own timestamp.
 *
 * Pure: the caller supplies random bytes and the time; no I/O, no clock.
 */
import { createHmac } from 'node:crypto';
import { sameBytes } from './constantTime.ts';

export const WEBHOOK_SIGNATURE_HEADER = 'Service-Signature';
export const WEBHOOK_EVENT_ID_HEADER = 'Service-Event-Id';
export const WEBHOOK_SIGNATURE_SCHEME = 'v1';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Random bytes behind a secret: 256 bits. */
export const WEBHOOK_SECRET_RANDOM_BYTES = 32;
/** Base62 characters after the prefix: 62^43 > 2^256, so 43 characters encode any 32 bytes exactly. */
export const WEBHOOK_SECRET_CHARS = 43;
/** How far a receiver lets a signature's timestamp be from its own clock, either way (Stripe's default). */
export const WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS = 300;
/** Secrets signing one delivery at once: the current one and those still inside their rotation overlap. */
export const WEBHOOK_SIGNING_SECRETS_MAX = 5;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_PATTERN = new RegExp(`^${WEBHOOK_SECRET_PREFIX}[0-9A-Za-z]{${WEBHOOK_SECRET_CHARS}}$`);
const HEX_SHA256_CHARS = 64;

/**
 * A new endpoint secret from caller-supplied random bytes: `whsec_` + the 32 bytes as one big-endian number
 * in 43 base62 digits. The encoding is exact (no modulo bias) and the secret is safe in URLs, shells and
 * environment files, and selectable with a double-click.
 */
export function formatWebhookSecret(random: Uint8Array): string {
  if (random.length < WEBHOOK_SECRET_RANDOM_BYTES) {
    throw new RangeError(`a webhook secret needs ${WEBHOOK_SECRET_RANDOM_BYTES} random bytes`);
  }
  let value = 0n;
  for (const byte of random.subarray(0, WEBHOOK_SECRET_RANDOM_BYTES)) value = (value << 8n) | BigInt(byte);
  let digits = '';
  for (let i = 0; i < WEBHOOK_SECRET_CHARS; i++) {
    digits = BASE62.charAt(Number(value % 62n)) + digits;
    value /= 62n;
  }
  return WEBHOOK_SECRET_PREFIX + digits;
}

export function isWebhookSecret(value: string): boolean {
  return SECRET_PATTERN.test(value);
}

/** The hex `v1` signature of one secret over `t + "." + raw body`. */
export function computeSignature(
  rawBody: string | Uint8Array,
  secret: string,
  timestampSeconds: number,
): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(rawBody).digest('hex');
}

/** The `Service-Signature` header value: the timestamp, then one `v1` per secret, in the order given. */
export function signatureHeader(
  rawBody: string | Uint8Array,
  secrets: readonly string[],
  timestampSeconds: number,
): string {
  if (secrets.length === 0) throw new RangeError('signing needs at least one secret');
  if (secrets.length > WEBHOOK_SIGNING_SECRETS_MAX) {
    throw new RangeError(`at most ${WEBHOOK_SIGNING_SECRETS_MAX} secrets sign one delivery`);
  }
  if (secrets.some((secret) => secret.length === 0)) throw new RangeError('a signing secret is empty');
  assertTimestamp(timestampSeconds);
  const signatures = secrets.map(
    (secret) => `${WEBHOOK_SIGNATURE_SCHEME}=${computeSignature(rawBody, secret, timestampSeconds)}`,
  );
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}

/** Whole seconds since the epoch, from a clock reading. */
export function unixSeconds(now: Date): number {
  return Math.floor(now.getTime() / 1000);
}

export type SignatureFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'no_matching_signature'
  | 'timestamp_outside_tolerance';

export type SignatureCheck = { ok: true; timestampSeconds: number } | { ok: false; reason: SignatureFailure };

export interface ParsedSignatureHeader {
  timestampSeconds: number;
  signatures: string[];
}

/**
 * Reads `t=…,v1=…[,v1=…]`. Exactly one `t` of decimal digits and at least one `v1` are required; other
 * schemes are ignored, as Stripe's verifier ignores them. Returns null when the header is malformed.
 */
export function parseSignatureHeader(header: string): ParsedSignatureHeader | null {
  let timestampSeconds: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator <= 0) return null;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') {
      if (timestampSeconds !== null || !/^[0-9]{1,15}$/.test(value)) return null;
      timestampSeconds = Number(value);
    } else if (key === WEBHOOK_SIGNATURE_SCHEME) {
      signatures.push(value);
    }
  }
  if (timestampSeconds === null || signatures.length === 0) return null;
  return { timestampSeconds, signatures };
}

/**
 * Checks a `Service-Signature` header against the secrets a receiver holds: some `v1` must equal the
 * signature of some secret (compared in constant time), and the timestamp must be within the tolerance of
 * `nowSeconds`, in the past or the future. The signature is checked first, so a timestamp failure is only
 * ever reported for an authentic delivery.
 */
export function verifySignatureHeader(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secrets: readonly string[],
  nowSeconds: number,
  toleranceSeconds: number = WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS,
): SignatureCheck {
  if (secrets.length === 0 || secrets.some((secret) => secret.length === 0)) {
    throw new RangeError('verifying needs at least one non-empty secret');
  }
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError('the tolerance must be a finite number of seconds, zero or more');
  }
  if (header === null || header === undefined || header.trim() === '') {
    return { ok: false, reason: 'missing_header' };
  }
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'malformed_header' };
  const matched = secrets.some((secret) => {
    const expected = Buffer.from(computeSignature(rawBody, secret, parsed.timestampSeconds), 'utf8');
    return parsed.signatures.some((candidate) => constantTimeEqual(expected, candidate));
  });
  if (!matched) return { ok: false, reason: 'no_matching_signature' };
  if (Math.abs(nowSeconds - parsed.timestampSeconds) > toleranceSeconds) {
    return { ok: false, reason: 'timestamp_outside_tolerance' };
  }
  return { ok: true, timestampSeconds: parsed.timestampSeconds };
}

function constantTimeEqual(expected: Buffer, candidate: string): boolean {
  if (candidate.length !== HEX_SHA256_CHARS) return false;
  const actual = Buffer.from(candidate, 'utf8');
  return sameBytes(actual, expected);
}

function assertTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError('the signature timestamp must be whole seconds since the epoch');
  }
}
