/**
 * Webhook policy, pure: which URLs may subscribe, the retry schedule, payload spelling, and when an endpoint
 * that keeps failing is disabled. Time and randomness are arguments.
 */
import { WEBHOOK_SIGNING_SECRETS_MAX } from './signing.ts';

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

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

/** The four octets of a dotted-quad IPv4 address in its canonical decimal form, or undefined. */
export function parseIpv4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p))) return undefined;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address (with `::`, a trailing dotted quad, or a zone), or undefined. */
export function parseIpv6(text: string): number[] | undefined {
  let s = text.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return undefined;
  const tail = s.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (!v4) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    s = `${s.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string | undefined) => (part ? part.split(':') : []);
  const head = groupsOf(halves[0]);
  const rest = groupsOf(halves[1]);
  const groups =
    halves.length === 2
      ? head.length + rest.length <= 7
        ? [...head, ...Array<string>(8 - head.length - rest.length).fill('0'), ...rest]
        : undefined
      : head;
  if (groups?.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => Number.parseInt(g, 16));
}

/** A literal IPv4 or IPv6 address (IPv6 with or without brackets). */
export function isIpAddress(text: string): boolean {
  return parseIpv4(text) !== undefined || parseIpv6(text) !== undefined;
}

/**
 * IPv4 blocks that are not public unicast (IANA special-purpose registry): this network, private, shared
 * (carrier-grade NAT), loopback, link-local (cloud metadata), IETF assignments, documentation, 6to4 relay,
 * benchmarking, multicast, reserved and broadcast.
 */
const RESERVED_IPV4_BLOCKS: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

function ipv4Number(octets: readonly number[]): number {
  return octets.reduce((n, o) => n * 256 + o, 0);
}

const RESERVED_IPV4_RANGES = RESERVED_IPV4_BLOCKS.map(([base, bits]) => {
  const start = ipv4Number(parseIpv4(base) ?? []);
  return { start, end: start + 2 ** (32 - bits) - 1 };
});

function isReservedIpv4(octets: readonly number[]): boolean {
  const n = ipv4Number(octets);
  return RESERVED_IPV4_RANGES.some((r) => n >= r.start && n <= r.end);
}

/**
 * IPv6: only global unicast (2000::/3) may be a target, less the IETF-assignment block 2001::/23 (Teredo,
 * benchmarking, ORCHID), documentation (2001:db8::/32, 3fff::/20); forms that carry an IPv4 address
 * (mapped ::ffff:0:0/96, translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by it.
 * Everything else (::, ::1, fc00::/7 unique-local, fe80::/10 link-local, fec0::/10, ff00::/8 multicast,
 * 64:ff9b:1::/48, 100::/64, IPv4-compatible ::/96) is refused.
 */
function isReservedIpv6(g: readonly number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && g5 === 0xffff) return isReservedIpv4(embedded(g6, g7));
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return isReservedIpv4(embedded(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return isReservedIpv4(embedded(g6, g7));
  }
  if (g0 === 0x2002) return isReservedIpv4(embedded(g1, g2));
  if ((g0 & 0xe000) !== 0x2000) return true;
  if (g0 === 0x2001 && g1 < 0x200) return true;
  if (g0 === 0x2001 && g1 === 0xdb8) return true;
  return g0 === 0x3fff && g1 < 0x1000;
}

/**
 * A literal IP address that must never be a production webhook target (loopback, private, link-local,
 * reserved). A host name is not an address: false. Something shaped like a dotted quad that is not a
 * canonical one (octal, short forms) is refused rather than guessed at.
 */
export function isReservedAddress(address: string): boolean {
  const v4 = parseIpv4(address);
  if (v4) return isReservedIpv4(v4);
  const v6 = parseIpv6(address);
  if (v6) return isReservedIpv6(v6);
  return /^[0-9.]+$/.test(address);
}

/** The host of a URL as a resolver takes it: lower case, IPv6 without brackets, no trailing dot. */
export function urlHost(url: URL): string {
  return url.hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** Names that only mean something inside a network (RFC 6761, RFC 6762, RFC 8375, ICANN's .internal). */
const LOCAL_NAME_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];

function isLocalName(host: string): boolean {
  return host === 'localhost' || LOCAL_NAME_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/**
 * Where webhook URLs may point. `public_only`, in production and by default in the sandbox: publicly
 * reachable hosts only. `allow_private`, only in the sandbox with MKOBA_WEBHOOK_ALLOW_PRIVATE=1 for local
 * development: any host, including this machine, private networks and reserved addresses.
 */
export type WebhookAddressPolicy = 'public_only' | 'allow_private';

/**
 * Checks a URL's form. `public_only`: HTTPS only, to a public address or a fully qualified name that is not
 * a local one (names are resolved and checked by the use case, and again at connect time). `allow_private`:
 * HTTPS to any host, and plain HTTP only to a host that is not public: a loopback, private or reserved
 * address, a local name (`localhost`, `*.local`, `*.internal`, …) or a single-label name (`receiver`).
 */
export function checkWebhookUrl(text: string, policy: WebhookAddressPolicy): UrlVerdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'must be HTTPS' };
  if (url.username || url.password) return { ok: false, reason: 'must not carry credentials' };
  if (url.hash) return { ok: false, reason: 'must not have a fragment' };
  const host = urlHost(url);
  const literal = isIpAddress(host);
  if (policy === 'allow_private') {
    if (url.protocol === 'https:') return { ok: true };
    const local = literal ? isReservedAddress(host) : isLocalName(host) || !host.includes('.');
    if (local) return { ok: true };
    return {
      ok: false,
      reason: 'must be HTTPS (plain HTTP is allowed only to local and private addresses)',
    };
  }
  if (url.protocol !== 'https:') return { ok: false, reason: 'must be HTTPS' };
  if (literal) {
    return isReservedAddress(host)
      ? { ok: false, reason: 'must not be a loopback, private, link-local or reserved address' }
      : { ok: true };
  }
  if (isLocalName(host)) return { ok: false, reason: 'must be publicly reachable, not a local name' };
  if (!host.includes('.') || /^[0-9.]+$/.test(host)) {
    return { ok: false, reason: 'must name a fully qualified public host' };
  }
  return { ok: true };
}

/** The verdict on what a production URL's host name resolved to: every address must be public. */
export function checkResolvedAddresses(host: string, addresses: readonly string[]): UrlVerdict {
  if (addresses.length === 0) return { ok: false, reason: `host ${host} resolves to no address` };
  const reserved = addresses.find((a) => isReservedAddress(a));
  if (reserved !== undefined) {
    return {
      ok: false,
      reason: `host ${host} resolves to ${reserved}, a loopback, private, link-local or reserved address`,
    };
  }
  return { ok: true };
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
