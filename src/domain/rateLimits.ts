/**
 * Rate limits, pure: the token bucket, how client addresses are grouped, and the IETF `RateLimit` /
 * `RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers). Time is an argument.
 *
 * A bucket holds up to `capacity` tokens and gains `refillPerSecond` of them continuously. A request is
 * admitted when every bucket it draws on holds at least one token, and then costs each of them `cost`.
 * A missing bucket is a full one, so a store may forget any bucket that has refilled.
 */
import { parseIpv6 } from './webhooks.ts';

export interface TokenBucket {
  /** The burst: tokens a full bucket holds. */
  capacity: number;
  refillPerSecond: number;
}

export interface BucketState {
  tokens: number;
  updatedAtMs: number;
}

/** The tokens a bucket holds at `nowMs`: its state refilled for the time since, up to its capacity. */
export function tokensAt(bucket: TokenBucket, state: BucketState | undefined, nowMs: number): number {
  if (state === undefined) return bucket.capacity;
  // A clock that stepped back refills nothing rather than taking tokens away.
  const elapsedMs = Math.max(0, nowMs - state.updatedAtMs);
  return Math.min(bucket.capacity, state.tokens + (elapsedMs * bucket.refillPerSecond) / 1000);
}

export interface BucketsTaken {
  allowed: boolean;
  /** Each bucket's tokens after the request, in the order given. */
  tokens: number[];
}

/**
 * All or nothing: when every bucket holds a token, `cost` is taken from each; otherwise nothing is.
 * A cost of 0 only asks whether the buckets would admit a request.
 */
export function takeTokens(
  buckets: readonly TokenBucket[],
  states: readonly (BucketState | undefined)[],
  nowMs: number,
  cost: number,
): BucketsTaken {
  const available = buckets.map((bucket, i) => tokensAt(bucket, states[i], nowMs));
  const allowed = available.every((tokens) => tokens >= 1);
  return { allowed, tokens: allowed ? available.map((tokens) => Math.max(0, tokens - cost)) : available };
}

/** A bucket as the client sees it: its name in the RateLimit fields, its shape and what it holds now. */
export interface BucketStatus {
  policy: string;
  bucket: TokenBucket;
  tokens: number;
}

/** Seconds for an empty bucket to fill: the window of the `RateLimit-Policy` field. */
export function windowSeconds(bucket: TokenBucket): number {
  return Math.ceil(bucket.capacity / bucket.refillPerSecond);
}

/** Whole seconds until the bucket holds `tokens` again (0 when it already does). */
function secondsUntil(status: BucketStatus, tokens: number): number {
  const missing = Math.min(tokens, status.bucket.capacity) - status.tokens;
  return missing <= 0 ? 0 : Math.ceil(missing / status.bucket.refillPerSecond);
}

/** `RateLimit-Policy`: each bucket's quota (`q`, its burst) and window (`w`, seconds to fill it). */
export function rateLimitPolicyField(statuses: readonly BucketStatus[]): string {
  return statuses.map((s) => `"${s.policy}";q=${s.bucket.capacity};w=${windowSeconds(s.bucket)}`).join(', ');
}

/** `RateLimit`: each bucket's whole tokens left (`r`) and seconds until it is full again (`t`). */
export function rateLimitField(statuses: readonly BucketStatus[]): string {
  return statuses
    .map((s) => `"${s.policy}";r=${Math.floor(s.tokens)};t=${secondsUntil(s, s.bucket.capacity)}`)
    .join(', ');
}

/** `Retry-After` of a refused request: whole seconds until every bucket holds a token again, at least 1. */
export function retryAfterSeconds(statuses: readonly BucketStatus[]): number {
  return Math.max(1, ...statuses.map((s) => secondsUntil(s, 1)));
}

/**
 * The address a per-address bucket is kept for: an IPv4 address as it is (also when written as an
 * IPv4-mapped IPv6 address), an IPv6 address by its /64 prefix, since one host or customer is routinely
 * given a whole /64 and could otherwise draw on 2^64 buckets.
 */
export function addressBucketKey(ip: string): string {
  const groups = parseIpv6(ip);
  if (groups === undefined) return ip;
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = groups;
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0xffff) {
    return [g >> 8, g & 0xff, h >> 8, h & 0xff].join('.');
  }
  return `${[a, b, c, d].map((group) => group.toString(16)).join(':')}::/64`;
}
