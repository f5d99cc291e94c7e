/**
 * Webhook policy, pure: which URLs may subscribe, the retry schedule, payload spelling, and when an endpoint
 * that keeps failing is disabled. Time and randomness are arguments.
 */
import type { Environment } from './apiKeys.ts';

export const PAYLOAD_FORMATS = ['snake_case', 'camel_case'] as const;
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];

export const SUBSCRIPTION_STATUSES = ['enabled', 'disabled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const WEBHOOK_URL_LENGTH_MAX = 2048;
export const WEBHOOK_DESCRIPTION_LENGTH_MAX = 500;
export const WEBHOOK_EVENT_TYPES_MAX = 50;
export const WEBHOOK_TIMEOUT_MS_DEFAULT = 10_000;
/** What we keep of a receiver's response body in the attempt log. */
export const WEBHOOK_RESPONSE_BODY_CHARS_MAX = 2_048;
/** How long a rotated-out secret keeps signing alongside the new one. */
export const WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT = 24;
/** An endpoint failing without a single success for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_FAILING_HOURS = 5 * 24;
/** Deliveries one subscription may have in flight at once, so a slow endpoint cannot hog the dispatchers. */
export const WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX = 4;
/** Bounds on a receiver's Retry-After: honoured, but never sooner than 1 s nor later than 1 h. */
export const WEBHOOK_RETRY_AFTER_SECONDS_MIN = 1;
export const WEBHOOK_RETRY_AFTER_SECONDS_MAX = 3_600;
/** Each scheduled delay is scaled by a random factor in [1 - j, 1 + j], so retries of a burst spread out. */
export const WEBHOOK_RETRY_JITTER_FRACTION = 0.2;

/**
 * Seconds to wait before each retry (attempt 2, 3, …): about three days in all, front-loaded so a brief
 * outage heals fast. Configurable with MKOBA_WEBHOOK_RETRY_SCHEDULE.
 */
export const WEBHOOK_RETRY_SCHEDULE_SECONDS_DEFAULT: readonly number[] = [
  5, 300, 1_800, 7_200, 18_000, 36_000, 36_000, 36_000, 36_000, 36_000, 36_000,
];

export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return undefined;
  const seconds = parts.map(Number);
  return seconds.every((s) => Number.isFinite(s) && s >= 0) ? seconds : undefined;
}

export type AttemptResult =
  | { kind: 'success' }
  | { kind: 'failure'; statusCode?: number | undefined; retryAfterSeconds?: number | undefined };

export type NextStep = { kind: 'done' } | { kind: 'retry'; at: Date } | { kind: 'exhausted' };

/**
 * After attempt number `attempt` (1-based) failed: when to try again, or that the schedule is spent.
 * `random` in [0, 1) drives the jitter.
 */
export function nextAttempt(
  attempt: number,
  result: AttemptResult,
  schedule: readonly number[],
  now: Date,
  random: number,
): NextStep {
  if (result.kind === 'success') return { kind: 'done' };
  const scheduled = schedule[attempt - 1];
  if (scheduled === undefined) return { kind: 'exhausted' };
  const jitter = 1 + WEBHOOK_RETRY_JITTER_FRACTION * (2 * random - 1);
  let delaySeconds = scheduled * jitter;
  if (result.retryAfterSeconds !== undefined) {
    const asked = Math.min(
      WEBHOOK_RETRY_AFTER_SECONDS_MAX,
      Math.max(WEBHOOK_RETRY_AFTER_SECONDS_MIN, result.retryAfterSeconds),
    );
    delaySeconds = Math.max(delaySeconds, asked);
  }
  return { kind: 'retry', at: new Date(now.getTime() + Math.round(delaySeconds * 1000)) };
}

export function shouldDisable(failingSince: Date | null, now: Date, disableAfterMs: number): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= disableAfterMs;
}

export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes('*') || events.includes(type);
}

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The spec's spelling 2: every field name in camelCase, except the caller's own metadata keys. */
export function toCamelCase(value: unknown, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => toCamelCase(v));
  if (value === null || typeof value !== 'object') return value;
  if (key === 'metadata') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), toCamelCase(v, k)]));
}

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

/** A literal IP address that must never be a production webhook target (loopback, private, link-local, reserved). */
export function isReservedAddress(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  const octets = v4.split('.').map(Number);
  if (octets.length === 4 && octets.every((o) => Number.isInteger(o) && o >= 0 && o <= 255)) {
    const [a = 0, b = 0] = octets;
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (!v6.includes(':')) return false;
  return (
    v6 === '::' ||
    v6 === '::1' ||
    v6.startsWith('fc') ||
    v6.startsWith('fd') ||
    v6.startsWith('fe8') ||
    v6.startsWith('fe9') ||
    v6.startsWith('fea') ||
    v6.startsWith('feb') ||
    v6.startsWith('ff') ||
    v6.startsWith('64:ff9b') ||
    v6.startsWith('2001:db8')
  );
}

const LOCAL_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Checks a URL's form. Production: HTTPS only, and no literal reserved address or local name (names are
 * resolved and checked again at connect time). Sandbox: HTTPS anywhere, plus plain HTTP to this machine.
 */
export function checkWebhookUrl(text: string, environment: Environment): UrlVerdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'must not have a fragment' };
  const host = url.hostname.toLowerCase();
  const isLocal = LOCAL_HOSTNAMES.includes(host) || host.endsWith('.localhost') || host.startsWith('127.');
  if (environment === 'sandbox') {
    if (url.protocol === 'https:') return { ok: true };
    if (url.protocol === 'http:' && isLocal) return { ok: true };
    return {
      ok: false,
      reason: 'must be HTTPS (plain HTTP is allowed only to localhost or 127.0.0.1 in the sandbox)',
    };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must be HTTPS' };
  if (isLocal || host.endsWith('.local') || host.endsWith('.internal')) {
    return { ok: false, reason: 'must be publicly reachable, not a local name' };
  }
  if (isReservedAddress(host))
    return { ok: false, reason: 'must not be a loopback, private, link-local or reserved address' };
  return { ok: true };
}
