/**
 * Webhook policy, pure: which URLs may subscribe, the retry schedule, payload spelling, and when an endpoint
 * that keeps failing is disabled. Time and randomness are arguments.
 */
import { checkOutboundUrl, type OutboundAddressPolicy, type UrlVerdict } from './outboundAddresses.ts';
import { WEBHOOK_SIGNING_SECRETS_MAX } from './signing.ts';

export {
  checkResolvedAddresses,
  isIpAddress,
  isReservedAddress,
  parseIpv4,
  parseIpv6,
  type UrlVerdict,
  urlHost,
} from './outboundAddresses.ts';

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
/**
 * What we read of a receiver's response body: enough for the excerpt (a character is at most 4 bytes in
 * UTF-8). The rest is never waited for, so an answer that streams on cannot hold a slot until the time-out.
 */
export const WEBHOOK_RESPONSE_BODY_BYTES_READ_MAX = 4 * WEBHOOK_RESPONSE_BODY_CHARS_MAX;
/** How long a rotated-out secret keeps signing alongside the new one. */
export const WEBHOOK_SECRET_ROTATION_GRACE_HOURS_DEFAULT = 24;
/** An endpoint failing without a single success for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_FAILING_HOURS = 5 * 24;
/** Deliveries one subscription may have in flight at once by default (MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY), so a slow endpoint cannot hog the dispatchers. */
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

/** Bounds on MKOBA_WEBHOOK_RETRY_SCHEDULE: how many retries, and the longest single wait. */
export const WEBHOOK_RETRY_SCHEDULE_ENTRIES_MAX = 100;
export const WEBHOOK_RETRY_DELAY_SECONDS_MAX = 7 * 24 * 3_600;

/** Comma-separated seconds (`5,300,1800`; decimals allowed) within the bounds above, or undefined. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length > WEBHOOK_RETRY_SCHEDULE_ENTRIES_MAX) return undefined;
  if (parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return undefined;
  const seconds = parts.map(Number);
  return seconds.every((s) => Number.isFinite(s) && s <= WEBHOOK_RETRY_DELAY_SECONDS_MAX)
    ? seconds
    : undefined;
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

/** NUL (which PostgreSQL text cannot hold) and lone surrogates (which UTF-8 cannot encode). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this must find.
const UNSTORABLE_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text any text column and any JSON body can carry: NUL and lone surrogates become U+FFFD, and it is cut to
 * `charsMax` UTF-16 units without splitting a surrogate pair.
 */
export function storableText(text: string, charsMax: number): string {
  const clean = text.replace(UNSTORABLE_CHARS, '\uFFFD');
  if (clean.length <= charsMax) return clean;
  const cut = clean.slice(0, charsMax);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * The logged excerpt of a receiver's answer, from its first bytes: UTF-8, with whatever does not decode
 * (a gzip or other binary body) shown as U+FFFD, and storable.
 */
export function responseExcerpt(bytes: Uint8Array): string {
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  return storableText(text, WEBHOOK_RESPONSE_BODY_CHARS_MAX);
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

/**
 * Where webhook URLs may point. `public_only`, in production and by default in the sandbox: publicly
 * reachable hosts only. `allow_private`, only in the sandbox with MKOBA_WEBHOOK_ALLOW_PRIVATE=1 for local
 * development: any host, including this machine, private networks and reserved addresses. The rules are
 * the outbound address guard's (outboundAddresses.ts), shared by every address the service calls.
 */
export type WebhookAddressPolicy = Extract<OutboundAddressPolicy, 'public_only' | 'allow_private'>;

/** A webhook URL's form under its policy: the outbound guard's `checkOutboundUrl`. */
export function checkWebhookUrl(text: string, policy: WebhookAddressPolicy): UrlVerdict {
  return checkOutboundUrl(text, policy);
}

/** What a webhook secret is sealed for: opening it needs the subscription it was sealed under. */
export function webhookSecretContext(subscriptionId: string): string {
  return `webhook_secret:${subscriptionId}`;
}

/**
 * A rotation adds a secret; the ones past the signing bound (counted newest first, the new one included)
 * must stop signing at once, or the header could not carry them all. Returns those to retire early.
 */
export function secretsBeyondSigningBound<T>(liveNewestFirst: readonly T[]): T[] {
  return liveNewestFirst.slice(WEBHOOK_SIGNING_SECRETS_MAX);
}
