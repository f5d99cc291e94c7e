/**
 * Each test file gets its own database: a fresh in-memory PGlite, and, when TEST_DATABASE_URL is set,
 * its own schema on that PostgreSQL server. Tests go through the real HTTP layer with app.inject.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { issueApiKey } from '../../src/app/apiKeys.ts';
import { type Deps, systemDeps } from '../../src/app/deps.ts';
import { seedSandbox } from '../../src/app/seed.ts';
import { defaultRateLimitSettings, type RateLimitSettings } from '../../src/config.ts';
import type { Environment } from '../../src/domain/apiKeys.ts';
import { buildApp } from '../../src/http/app.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPgliteStore } from '../../src/store/pglite.ts';
import { createSchema, dropSchema, openPostgresStore } from '../../src/store/postgres.ts';
import type { Store } from '../../src/store/store.ts';

export type Backend = 'pglite' | 'postgres';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const BACKENDS: Backend[] = TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase {
  store: Store;
  /** The schema on the PostgreSQL server, for tests that open more connections to the same database. */
  schema: string | undefined;
  close(): Promise<void>;
}

export async function openTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const store = await openPgliteStore(undefined);
    return { store, schema: undefined, close: () => store.close() };
  }
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await createSchema(TEST_DATABASE_URL, schema);
  const store = await openPostgresStore({ connectionString: TEST_DATABASE_URL, schema });
  return {
    store,
    schema,
    async close() {
      await store.close();
      await dropSchema(TEST_DATABASE_URL, schema);
    },
  };
}

export interface TestApp {
  backend: Backend;
  app: FastifyInstance;
  deps: Deps;
  db: TestDatabase;
  /** The seeded sandbox organization's key (read and write). */
  key: string;
  close(): Promise<void>;
}

/** A bucket that no test of another feature empties. */
const UNREACHED_BUCKET = { capacity: 1_000_000, refillPerSecond: 1_000_000 };

/**
 * Rate limits stay on in every test app, so their hooks and fields run under every test, with buckets
 * that tests of other features (hundreds of failed authentications, bursts of parallel writes) never
 * empty. test/rateLimit.test.ts passes its own settings.
 */
export const TEST_RATE_LIMITS: RateLimitSettings = {
  ...defaultRateLimitSettings('sandbox'),
  key: UNREACHED_BUCKET,
  organization: UNREACHED_BUCKET,
  authFailures: UNREACHED_BUCKET,
};

export async function startTestApp(
  backend: Backend,
  environment: Environment = 'sandbox',
  options: { rateLimits?: RateLimitSettings } = {},
): Promise<TestApp> {
  const db = await openTestDatabase(backend);
  const deps = systemDeps(db.store, environment);
  await migrate(db.store);
  let key: string;
  if (environment === 'sandbox') {
    const seeded = await seedSandbox(deps, undefined);
    if (!seeded.apiKey) throw new Error('seed did not return a key');
    key = seeded.apiKey;
  } else {
    key = (await issueApiKey(deps, { organizationName: 'Production Org' })).key;
  }
  const app = await buildApp({ deps, rateLimits: options.rateLimits ?? TEST_RATE_LIMITS });
  return {
    backend,
    app,
    deps,
    db,
    key,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/** A new organization with its own key, for isolation tests. */
export async function newOrganizationKey(t: TestApp, scopes?: ('read' | 'write')[]): Promise<string> {
  const name = `Org ${randomBytes(4).toString('hex')}`;
  return (await issueApiKey(t.deps, { organizationName: name, scopes })).key;
}

export interface ApiResponse extends LightMyRequestResponse {
  data: any;
}

/** Sends a request with the key as a bearer token; `body` objects are sent as JSON. */
export async function api(
  t: TestApp,
  method: InjectOptions['method'],
  url: string,
  options: { body?: unknown; key?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? t.key : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const response = await t.app.inject({
    method,
    url,
    headers,
    ...(options.body === undefined ? {} : { payload: options.body as InjectOptions['payload'] }),
  });
  let data: unknown;
  try {
    data = response.body ? JSON.parse(response.body) : undefined;
  } catch {
    data = response.body;
  }
  return Object.assign(response, { data });
}

export async function createCustomer(t: TestApp, key = t.key, name = 'Test Customer'): Promise<string> {
  const response = await api(t, 'POST', '/v1/customers', { key, body: { type: 'individual', name } });
  if (response.statusCode !== 201) throw new Error(`customer create failed: ${response.body}`);
  return response.data.id;
}
