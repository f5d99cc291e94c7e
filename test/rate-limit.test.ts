import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../packages/sdk/src/index.ts';
import { ConfigError } from '../src/config/variables.ts';
import {
  defaultRateLimitSettings,
  loadConfig,
  RATE_LIMIT_AUTH_FAILURES_BURST_PER_ADDRESS_DEFAULT,
  RATE_LIMIT_KEY_BURST_REQUESTS_DEFAULT,
  RATE_LIMIT_ORGANIZATION_BURST_REQUESTS_DEFAULT,
  type RateLimitSettings,
} from '../src/config.ts';
import {
  addressBucketKey,
  type BucketStatus,
  rateLimitField,
  rateLimitPolicyField,
  retryAfterSeconds,
  takeTokens,
  tokensAt,
} from '../src/domain/rateLimits.ts';
import { buildApp } from '../src/http/app.ts';
import { memoryBucketStore } from '../src/http/rateLimitStore.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';

/** The Redis the shared-bucket tests use (`.ci/run` sets it and starts the local Redis if it is down). */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;
type StoreKind = 'memory' | 'redis';
const STORES: StoreKind[] = TEST_REDIS_URL ? ['memory', 'redis'] : ['memory'];
/** Every Redis key this file writes starts with it, so parallel runs never meet. */
const REDIS_PREFIX = `mkoba:test:${randomBytes(6).toString('hex')}:`;
/** So slow that no bucket refills while a test runs: 1 token every 1000 s. */
const SLOW_REFILL_PER_SECOND = 0.001;
/** A Redis URL nothing listens on (port 1 is never used by a test machine's services). */
const CLOSED_REDIS_URL = 'redis://127.0.0.1:1';

function settings(store: StoreKind, overrides: Partial<RateLimitSettings>): RateLimitSettings {
  const big = { capacity: 1_000, refillPerSecond: SLOW_REFILL_PER_SECOND };
  return {
    ...defaultRateLimitSettings('sandbox'),
    key: big,
    organization: big,
    authFailures: big,
    redisUrl: store === 'redis' ? TEST_REDIS_URL : undefined,
    // Each app of a test shares the prefix it is given; tests do not share buckets with each other.
    redisKeyPrefix: `${REDIS_PREFIX}${randomBytes(4).toString('hex')}:`,
    ...overrides,
  };
}

/** `"name";r=…;t=…` members of a RateLimit field, by policy. */
function parseRateLimit(
  field: string | string[] | number | undefined,
): Record<string, { r: number; t: number }> {
  const out: Record<string, { r: number; t: number }> = {};
  for (const member of String(field ?? '').split(/,\s*/)) {
    const match = /^"([a-z_]+)";r=(\d+);t=(\d+)$/.exec(member);
    if (!match?.[1]) throw new Error(`not a RateLimit member: '${member}' in '${String(field)}'`);
    out[match[1]] = { r: Number(match[2]), t: Number(match[3]) };
  }
  return out;
}

describe('token buckets (pure)', () => {
  const bucket = { capacity: 3, refillPerSecond: 2 };

  it('refills continuously up to the capacity, and a clock stepping back refills nothing', () => {
    expect(tokensAt(bucket, undefined, 0)).toBe(3);
    expect(tokensAt(bucket, { tokens: 0, updatedAtMs: 1_000 }, 1_250)).toBe(0.5);
    expect(tokensAt(bucket, { tokens: 0, updatedAtMs: 1_000 }, 3_000)).toBe(3);
    expect(tokensAt(bucket, { tokens: 1, updatedAtMs: 1_000 }, 500)).toBe(1);
  });

  it('takes from every bucket or from none, and needs a whole token in each', () => {
    const other = { capacity: 10, refillPerSecond: 1 };
    expect(takeTokens([bucket, other], [undefined, undefined], 0, 1)).toEqual({
      allowed: true,
      tokens: [2, 9],
    });
    const refused = takeTokens([bucket, other], [{ tokens: 0.5, updatedAtMs: 0 }, undefined], 0, 1);
    expect(refused).toEqual({ allowed: false, tokens: [0.5, 10] });
    expect(takeTokens([bucket], [{ tokens: 1, updatedAtMs: 0 }], 0, 0)).toEqual({
      allowed: true,
      tokens: [1],
    });
  });

  it('renders RateLimit-Policy and RateLimit, and Retry-After as whole seconds until a token', () => {
    const statuses: BucketStatus[] = [
      { policy: 'key', bucket: { capacity: 200, refillPerSecond: 100 }, tokens: 150.5 },
      { policy: 'auth_failures', bucket: { capacity: 20, refillPerSecond: 10 / 60 }, tokens: 0.5 },
    ];
    expect(rateLimitPolicyField(statuses)).toBe('"key";q=200;w=2, "auth_failures";q=20;w=120');
    expect(rateLimitField(statuses)).toBe('"key";r=150;t=1, "auth_failures";r=0;t=117');
    expect(retryAfterSeconds(statuses)).toBe(3);
    expect(retryAfterSeconds(statuses.slice(0, 1))).toBe(1);
  });

  it('keeps IPv4 addresses apart and groups IPv6 addresses by /64', () => {
    expect(addressBucketKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucketKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucketKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressBucketKey('2001:DB8:1:2::ffff')).toBe('2001:db8:1:2::/64');
    expect(addressBucketKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressBucketKey('::1')).toBe('0:0:0:0::/64');
  });

  it('keeps at most the configured number of buckets in process, forgetting full ones first', async () => {
    let now = 0;
    const store = memoryBucketStore(() => now, 10);
    const slow = { capacity: 2, refillPerSecond: SLOW_REFILL_PER_SECOND };
    const fast = { capacity: 2, refillPerSecond: 1_000 };
    await store.take([{ id: 'kept', bucket: slow }], 2);
    // Each fast bucket is full again 1 ms after it is used: those are forgotten, the empty slow one is not.
    for (let i = 0; i < 20; i++) {
      now += 1;
      await store.take([{ id: `fast-${i}`, bucket: fast }], 1);
    }
    expect(await store.take([{ id: 'kept', bucket: slow }], 1)).toMatchObject({ allowed: false });

    // With no full bucket to forget, the least recently used goes (and is full again when next used).
    const small = memoryBucketStore(() => now, 2);
    for (const id of ['a', 'b', 'c']) await small.take([{ id, bucket: slow }], 2);
    expect(await small.take([{ id: 'c', bucket: slow }], 1)).toMatchObject({ allowed: false });
    expect(await small.take([{ id: 'a', bucket: slow }], 1)).toEqual({ allowed: true, tokens: [1] });
  });
});

describe('rate limit configuration', () => {
  it('has named defaults and reads each variable', () => {
    const defaults = loadConfig({}).rateLimits;
    expect(defaults).toMatchObject({
      enabled: true,
      key: { capacity: RATE_LIMIT_KEY_BURST_REQUESTS_DEFAULT },
      organization: { capacity: RATE_LIMIT_ORGANIZATION_BURST_REQUESTS_DEFAULT },
      authFailures: { capacity: RATE_LIMIT_AUTH_FAILURES_BURST_PER_ADDRESS_DEFAULT },
      redisUrl: undefined,
      redisKeyPrefix: 'mkoba:sandbox:rate-limit:',
    });
    const set = loadConfig({
      MKOBA_RATE_LIMITS: 'off',
      MKOBA_RATE_LIMIT_KEY_REQUESTS_PER_SECOND: '5',
      MKOBA_RATE_LIMIT_KEY_BURST_REQUESTS: '7',
      MKOBA_RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND: '11',
      MKOBA_RATE_LIMIT_ORGANIZATION_BURST_REQUESTS: '13',
      MKOBA_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '30',
      MKOBA_RATE_LIMIT_AUTH_FAILURES_BURST: '3',
      REDIS_URL: 'redis://127.0.0.1:6379/2',
      MKOBA_ENV: 'production',
      DATABASE_URL: 'postgres://x@127.0.0.1/db',
    }).rateLimits;
    expect(set).toEqual({
      enabled: false,
      key: { refillPerSecond: 5, capacity: 7 },
      organization: { refillPerSecond: 11, capacity: 13 },
      authFailures: { refillPerSecond: 0.5, capacity: 3 },
      redisUrl: 'redis://127.0.0.1:6379/2',
      redisKeyPrefix: 'mkoba:production:rate-limit:',
    });
  });

  it('refuses bad values, naming the variable', () => {
    const cases: [string, string][] = [
      ['MKOBA_RATE_LIMITS', 'yes'],
      ['MKOBA_RATE_LIMIT_KEY_REQUESTS_PER_SECOND', '0'],
      ['MKOBA_RATE_LIMIT_KEY_BURST_REQUESTS', '1.5'],
      ['MKOBA_RATE_LIMIT_ORGANIZATION_REQUESTS_PER_SECOND', 'many'],
      ['MKOBA_RATE_LIMIT_ORGANIZATION_BURST_REQUESTS', '-3'],
      ['MKOBA_RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', '1000001'],
      ['MKOBA_RATE_LIMIT_AUTH_FAILURES_BURST', '1e3'],
      ['REDIS_URL', 'http://127.0.0.1:6379'],
      ['REDIS_URL', 'redis://'],
    ];
    for (const [variable, value] of cases) {
      let thrown: unknown;
      try {
        loadConfig({ [variable]: value });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `${variable}=${value}`).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).variable).toBe(variable);
    }
  });
});

describe.each(BACKENDS)('rate limits on %s', (backend) => {
  // One database per backend; each test builds its own app on it with the limits it needs.
  let base: TestApp;
  const opened: FastifyInstance[] = [];
  const start = async (rateLimits: RateLimitSettings): Promise<TestApp> => {
    const app = await buildApp({ deps: base.deps, rateLimits });
    opened.push(app);
    return { ...base, app, close: () => app.close() };
  };
  beforeAll(async () => {
    base = await startTestApp(backend);
  });
  afterEach(async () => {
    for (const app of opened.splice(0)) await app.close();
  });
  afterAll(() => base.close());

  it('admits a burst of 50 parallel requests with the default limits', async () => {
    const t = await start(defaultRateLimitSettings('sandbox'));
    const responses = await Promise.all(Array.from({ length: 50 }, () => api(t, 'GET', '/v1/customers')));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    const left = responses.map((r) => parseRateLimit(r.headers.ratelimit).key?.r ?? -1);
    expect(Math.min(...left)).toBeGreaterThanOrEqual(RATE_LIMIT_KEY_BURST_REQUESTS_DEFAULT - 50);
  });

  it('lets every request through, with no RateLimit fields, when limits are off', async () => {
    const t = await start({
      ...settings('memory', { key: { capacity: 1, refillPerSecond: 0.001 } }),
      enabled: false,
    });
    for (let i = 0; i < 3; i++) {
      const response = await api(t, 'GET', '/v1/customers');
      expect(response.statusCode).toBe(200);
      expect(response.headers.ratelimit).toBeUndefined();
    }
  });

  it('keeps limiting, in process, when Redis cannot be reached', async () => {
    const t = await start(
      settings('memory', {
        key: { capacity: 2, refillPerSecond: SLOW_REFILL_PER_SECOND },
        redisUrl: CLOSED_REDIS_URL,
      }),
    );
    expect((await api(t, 'GET', '/v1/customers')).statusCode).toBe(200);
    const second = await api(t, 'GET', '/v1/customers');
    expect(second.statusCode).toBe(200);
    expect(parseRateLimit(second.headers.ratelimit).key?.r).toBe(0);
    expect((await api(t, 'GET', '/v1/customers')).statusCode).toBe(429);
  });

  describe.each(STORES)('with buckets %s', (store) => {
    afterAll(async () => {
      if (store !== 'redis' || !TEST_REDIS_URL) return;
      const redis = new Redis(TEST_REDIS_URL);
      const keys = await redis.keys(`${REDIS_PREFIX}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('sends RateLimit-Policy and RateLimit, then answers 429 with Retry-After once the key is spent', async () => {
      const t = await start(
        settings(store, {
          key: { capacity: 3, refillPerSecond: SLOW_REFILL_PER_SECOND },
          organization: { capacity: 10, refillPerSecond: SLOW_REFILL_PER_SECOND },
        }),
      );
      const remaining: { key?: number; organization?: number }[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await api(t, 'GET', '/v1/customers');
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-policy']).toBe('"key";q=3;w=3000, "organization";q=10;w=10000');
        const fields = parseRateLimit(response.headers.ratelimit);
        remaining.push({ key: fields.key?.r, organization: fields.organization?.r });
        expect(fields.key?.t).toBeGreaterThan(0);
      }
      expect(remaining).toEqual([
        { key: 2, organization: 9 },
        { key: 1, organization: 8 },
        { key: 0, organization: 7 },
      ]);

      // A refused POST is refused before its body is read: an invalid body still gets the 429.
      const refused = await api(t, 'POST', '/v1/customers', { body: { type: 'nonsense' } });
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.data).toMatchObject({
        type: 'urn:mkoba:error:rate_limited',
        status: 429,
        code: 'rate_limited',
        request_id: refused.headers['request-id'],
      });
      expect(refused.data.detail).toMatch(/this API key/);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(1 / SLOW_REFILL_PER_SECOND);
      expect(refused.data.detail).toContain(`Retry after ${retryAfter} s.`);
      // Refused means nothing was taken, from the organization either.
      expect(parseRateLimit(refused.headers.ratelimit)).toMatchObject({
        key: { r: 0 },
        organization: { r: 7 },
      });
      // Another organization's key has buckets of its own.
      const other = await newOrganizationKey(t);
      expect((await api(t, 'GET', '/v1/customers', { key: other })).statusCode).toBe(200);
    });

    it("shares the organization's bucket between its keys", async () => {
      const t = await start(
        settings(store, {
          key: { capacity: 10, refillPerSecond: SLOW_REFILL_PER_SECOND },
          organization: { capacity: 4, refillPerSecond: SLOW_REFILL_PER_SECOND },
        }),
      );
      const second = (await issueApiKey(t.deps, { organizationName: 'Mkoba Sandbox' })).key;
      for (const key of [t.key, second, t.key, second]) {
        expect((await api(t, 'GET', '/v1/wallets', { key })).statusCode).toBe(200);
      }
      for (const key of [t.key, second]) {
        const refused = await api(t, 'GET', '/v1/wallets', { key });
        expect(refused.statusCode).toBe(429);
        expect(refused.data.detail).toMatch(/this organization/);
        expect(parseRateLimit(refused.headers.ratelimit)).toMatchObject({
          key: { r: 8 },
          organization: { r: 0 },
        });
      }
    });

    it('refuses an address after too many failed authentications, before looking at its key', async () => {
      const t = await start(
        settings(store, { authFailures: { capacity: 3, refillPerSecond: SLOW_REFILL_PER_SECOND } }),
      );
      const from = (remoteAddress: string, key: string | null) =>
        t.app.inject({
          method: 'GET',
          url: '/v1/customers',
          remoteAddress,
          headers: key === null ? {} : { authorization: `Bearer ${key}` },
        });
      const wrongKey = `sk_sandbox_${'x'.repeat(32)}`;
      // Successes cost the address nothing.
      for (let i = 0; i < 5; i++) expect((await from('198.51.100.7', t.key)).statusCode).toBe(200);
      const failures = [];
      for (const key of [wrongKey, null, 'not-a-key']) failures.push(await from('198.51.100.7', key));
      expect(failures.map((r) => r.statusCode)).toEqual([401, 401, 401]);
      expect(failures.map((r) => r.headers['ratelimit-policy'])).toEqual(
        Array(3).fill('"auth_failures";q=3;w=3000'),
      );
      expect(failures.map((r) => parseRateLimit(r.headers.ratelimit).auth_failures?.r)).toEqual([2, 1, 0]);

      // Even the right key is refused now, so the address learns nothing about any key.
      const refused = await from('198.51.100.7', t.key);
      expect(refused.statusCode).toBe(429);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(JSON.parse(refused.body).detail).toMatch(/failed API key authentications from this address/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(parseRateLimit(refused.headers.ratelimit)).toMatchObject({ auth_failures: { r: 0 } });
      // Other addresses are not affected; an IPv6 /64 counts as one address.
      expect((await from('198.51.100.8', t.key)).statusCode).toBe(200);
      for (const address of ['2001:db8:7:7::1', '2001:db8:7:7::2', '2001:db8:7:7:ffff::3']) {
        expect((await from(address, wrongKey)).statusCode).toBe(401);
      }
      expect((await from('2001:db8:7:7::4', t.key)).statusCode).toBe(429);
      expect((await from('2001:db8:7:8::1', t.key)).statusCode).toBe(200);
    });

    it('exempts health, readiness, metrics and the documentation', async () => {
      const t = await start(
        settings(store, {
          key: { capacity: 1, refillPerSecond: SLOW_REFILL_PER_SECOND },
          authFailures: { capacity: 1, refillPerSecond: SLOW_REFILL_PER_SECOND },
        }),
      );
      expect((await api(t, 'GET', '/v1/customers')).statusCode).toBe(200);
      expect((await api(t, 'GET', '/v1/customers')).statusCode).toBe(429);
      expect((await api(t, 'GET', '/v1/customers', { key: 'wrong' })).statusCode).toBe(401);
      expect((await api(t, 'GET', '/v1/customers', { key: 'wrong' })).statusCode).toBe(429);
      for (const url of ['/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/docs/json']) {
        for (let i = 0; i < 3; i++) {
          const response = await api(t, 'GET', url);
          expect(response.statusCode, url).toBe(200);
          expect(response.headers.ratelimit, url).toBeUndefined();
        }
      }
    });

    it(
      store === 'redis'
        ? 'shares buckets between two server instances using the same Redis'
        : 'keeps buckets per server instance',
      async () => {
        const limits = settings(store, {
          key: { capacity: 3, refillPerSecond: SLOW_REFILL_PER_SECOND },
          authFailures: { capacity: 2, refillPerSecond: SLOW_REFILL_PER_SECOND },
        });
        const t = await start(limits);
        const second = await buildApp({ deps: t.deps, rateLimits: limits });
        try {
          const via = async (app: typeof second, key: string) =>
            app.inject({ method: 'GET', url: '/v1/customers', headers: { authorization: `Bearer ${key}` } });
          expect((await via(t.app, t.key)).statusCode).toBe(200);
          expect((await via(t.app, t.key)).statusCode).toBe(200);
          const onSecond = await via(second, t.key);
          expect(onSecond.statusCode).toBe(200);
          expect(parseRateLimit(onSecond.headers.ratelimit).key?.r).toBe(store === 'redis' ? 0 : 2);
          expect((await via(second, t.key)).statusCode).toBe(store === 'redis' ? 429 : 200);

          const wrong = `sk_sandbox_${'y'.repeat(32)}`;
          expect((await via(t.app, wrong)).statusCode).toBe(401);
          expect((await via(t.app, wrong)).statusCode).toBe(401);
          expect((await via(second, wrong)).statusCode).toBe(store === 'redis' ? 429 : 401);
        } finally {
          await second.close();
        }
      },
    );

    it('is honoured by the SDK, which waits Retry-After and retries', async () => {
      const t = await start(settings(store, { key: { capacity: 1, refillPerSecond: 0.5 } }));
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = t.app.server.address() as AddressInfo;
      const statuses: number[] = [];
      const client = createClient({
        baseUrl: `http://127.0.0.1:${port}`,
        apiKey: t.key,
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          statuses.push(response.status);
          return response;
        },
      });
      await client.listCustomers();
      await client.listCustomers();
      expect(statuses).toEqual([200, 429, 200]);
    });
  });
});
