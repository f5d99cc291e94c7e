/** Request fingerprints for Idempotency-Key: method + path + a hash of the body in canonical JSON. */
import { createHash } from 'node:crypto';
import { canonicalNumberText, numberSourceOf } from './jsonNumbers.ts';

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
/** Printable ASCII without spaces, as Stripe and the IETF draft's examples use. */
export const IDEMPOTENCY_KEY_PATTERN = `^[\\x21-\\x7E]{1,${IDEMPOTENCY_KEY_LENGTH_MAX}}$`;
export const IDEMPOTENCY_RETENTION_HOURS = 24;
/** What a client that hits a key still in flight is told to wait. */
export const IDEMPOTENCY_IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

/**
 * JSON with object keys sorted at every depth, so key order never changes a fingerprint. A number the
 * request parser read is written from its source text (`canonicalNumberText`): one spelling per value, never
 * rounded through a double.
 */
export function canonicalJson(value: unknown): string {
  return canonicalValue(value, undefined, '');
}

function canonicalValue(value: unknown, container: object | undefined, key: string): string {
  if (typeof value === 'number') {
    const text = numberSourceOf(container, key);
    return text === undefined ? JSON.stringify(value) : canonicalNumberText(text);
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item, i) => canonicalValue(item, value, String(i))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalValue(v, value, k)}`).join(',')}}`;
}

export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`)
    .digest('hex');
}

export function isExpired(createdAt: Date, now: Date): boolean {
  return now.getTime() - createdAt.getTime() >= IDEMPOTENCY_RETENTION_HOURS * 3_600_000;
}
