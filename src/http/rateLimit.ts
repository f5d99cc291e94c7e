/**
 * Rate limits on authenticated routes (those whose config names a scope; health, readiness, metrics and
 * the documentation are exempt). Three token buckets:
 * - per client address, for failed key authentication: checked before the key is, so an address that
 *   keeps failing is refused without a lookup, and charged by each 401;
 * - per API key and per organization: each authenticated request needs a token in both.
 * Every answer they govern carries `RateLimit-Policy` and `RateLimit`; a refusal is a 429 `rate_limited`
 * problem with `Retry-After`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RateLimitSettings } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import {
  addressBucketKey,
  type BucketStatus,
  rateLimitField,
  rateLimitPolicyField,
  retryAfterSeconds,
  type TokenBucket,
} from '../domain/rateLimits.ts';
import {
  type BucketRef,
  type BucketStore,
  memoryBucketStore,
  openRedisBucketStore,
} from './rateLimitStore.ts';

/** Policy names in the RateLimit fields. */
const KEY_POLICY = 'key';
const ORGANIZATION_POLICY = 'organization';
const AUTH_FAILURES_POLICY = 'auth_failures';

/**
 * The failed-authentication bucket of a client address, for other ways in than an API key (the console's
 * sign-in): a failed password counts against the same bucket as a failed key.
 */
export interface AuthFailureLimiter {
  /** Whether the address may try now; when not, the seconds until it may. */
  check(ip: string): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }>;
  /** Charges one failure to the address. */
  charge(ip: string): Promise<void>;
}

/** Registers the limits; returns the failed-authentication limiter, or undefined when limits are off. */
export async function registerRateLimits(
  app: FastifyInstance,
  settings: RateLimitSettings,
  nowMs: () => number,
): Promise<AuthFailureLimiter | undefined> {
  if (!settings.enabled) return undefined;
  const store = await openBucketStore(app, settings, nowMs);
  app.addHook('onClose', () => store.close());
  refuseFailingAddresses(app, store, settings);
  chargeAuthenticatedRequests(app, store, settings);
  chargeAuthFailures(app, store, settings);
  return authFailureLimiter(store, settings);
}

/** The failed-authentication bucket of a client address. */
function addressBucket(ip: string, settings: RateLimitSettings): BucketRef {
  return { id: `address:${addressBucketKey(ip)}`, bucket: settings.authFailures };
}

function authFailureStatus(settings: RateLimitSettings, tokens: number[]): BucketStatus[] {
  return [{ policy: AUTH_FAILURES_POLICY, bucket: settings.authFailures, tokens: tokens[0] ?? 0 }];
}

/** Before authentication (this hook is added before the one that authenticates). */
function refuseFailingAddresses(app: FastifyInstance, store: BucketStore, settings: RateLimitSettings): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.scope === undefined) return;
    const { allowed, tokens } = await store.take([addressBucket(request.ip, settings)], 0);
    if (allowed) return;
    const statuses = authFailureStatus(settings, tokens);
    setRateLimitFields(reply, statuses);
    throw rateLimited(
      `Too many failed API key authentications from this address (${perMinute(settings.authFailures)} a minute, bursts of ${settings.authFailures.capacity}).`,
      statuses,
    );
  });
}

/** After authentication, before the body is read: a refused request costs no parsing. */
function chargeAuthenticatedRequests(
  app: FastifyInstance,
  store: BucketStore,
  settings: RateLimitSettings,
): void {
  app.addHook('preParsing', async (request, reply, payload) => {
    const principal = request.principal;
    if (principal === undefined) return payload;
    const { allowed, tokens } = await store.take(
      [
        { id: `key:${principal.keyId}`, bucket: settings.key },
        { id: `organization:${principal.organizationId}`, bucket: settings.organization },
      ],
      1,
    );
    const statuses: BucketStatus[] = [
      { policy: KEY_POLICY, bucket: settings.key, tokens: tokens[0] ?? 0 },
      { policy: ORGANIZATION_POLICY, bucket: settings.organization, tokens: tokens[1] ?? 0 },
    ];
    setRateLimitFields(reply, statuses);
    if (allowed) return payload;
    const [key] = statuses;
    throw rateLimited(
      key !== undefined && key.tokens < 1
        ? `Too many requests with this API key (${describe(settings.key)}).`
        : `Too many requests for this organization, all its API keys together (${describe(settings.organization)}).`,
      statuses,
    );
  });
}

/** Each 401 on a governed route charges its client address one failure. */
function chargeAuthFailures(app: FastifyInstance, store: BucketStore, settings: RateLimitSettings): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 401 || request.routeOptions.config.scope === undefined) return payload;
    const { tokens } = await store.take([addressBucket(request.ip, settings)], 1);
    setRateLimitFields(reply, authFailureStatus(settings, tokens));
    return payload;
  });
}

function authFailureLimiter(store: BucketStore, settings: RateLimitSettings): AuthFailureLimiter {
  return {
    async check(ip) {
      const { allowed, tokens } = await store.take([addressBucket(ip, settings)], 0);
      return allowed
        ? { allowed }
        : { allowed, retryAfterSeconds: retryAfterSeconds(authFailureStatus(settings, tokens)) };
    },
    async charge(ip) {
      await store.take([addressBucket(ip, settings)], 1);
    },
  };
}

async function openBucketStore(
  app: FastifyInstance,
  settings: RateLimitSettings,
  nowMs: () => number,
): Promise<BucketStore> {
  const memory = memoryBucketStore(nowMs);
  if (settings.redisUrl === undefined) return memory;
  return openRedisBucketStore({
    url: settings.redisUrl,
    keyPrefix: settings.redisKeyPrefix,
    fallback: memory,
    onUnavailable: (error) =>
      app.log.error(
        { err: error },
        'rate limits: Redis is unavailable; each process limits on its own until it answers again',
      ),
    onRecovered: () => app.log.warn('rate limits: Redis answers again; limits are shared'),
  });
}

function setRateLimitFields(reply: FastifyReply, statuses: BucketStatus[]): void {
  reply.header('RateLimit-Policy', rateLimitPolicyField(statuses));
  reply.header('RateLimit', rateLimitField(statuses));
}

function rateLimited(reason: string, statuses: BucketStatus[]): AppError {
  const seconds = retryAfterSeconds(statuses);
  return new AppError({
    status: 429,
    code: 'rate_limited',
    title: 'Too many requests',
    detail: `${reason} Retry after ${seconds} s.`,
    retryAfterSeconds: seconds,
  });
}

function perMinute(bucket: TokenBucket): number {
  return Math.round(bucket.refillPerSecond * 60 * 1000) / 1000;
}

function describe(bucket: TokenBucket): string {
  return `${bucket.refillPerSecond} a second, bursts of ${bucket.capacity}`;
}
