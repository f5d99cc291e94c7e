/**
 * Each test file gets its own database: a fresh in-memory PGlite opened from the migrated template
 * (globalSetup.ts), and, when TEST_DATABASE_URL is set, its own database on that PostgreSQL server copied
 * from the migrated template database (postgresTemplate.ts). Tests go through the real HTTP layer with
 * app.inject.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { runAdminCommand } from '../../src/app/admin.ts';
import { type Deps, systemDeps } from '../../src/app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from '../../src/app/seed.ts';
import { defaultRateLimitSettings, type RateLimitSettings } from '../../src/config.ts';
import type { Environment, Scope } from '../../src/domain/access.ts';
import { keyringOf, MASTER_KEY_BYTES } from '../../src/domain/sealing.ts';
import { buildApp } from '../../src/http/app.ts';
import { issueApiKey } from '../../src/modules/apiKeys/useCases/keys.ts';
import { PARTNER_RAIL_FACTORIES } from '../../src/modules/railPartners/partners/factories.ts';
import { closeRailPartnerDirectory } from '../../src/modules/railPartners/useCases/directory.ts';
import { enforceLockOrder } from '../../src/store/lockOrder.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPgliteStore } from '../../src/store/pglite.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import { findOrganizationByName } from '../../src/store/repositories/organizations.ts';
import type { Store } from '../../src/store/store.ts';
import { tracedStore } from '../../src/store/tracedStore.ts';
import { createPostgresTestDatabase } from './postgresTemplate.ts';

// Every test runs with the lock order checked: a path that locks accounts after the evidence chain throws.
enforceLockOrder(true);

export type Backend = 'pglite' | 'postgres';
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const BACKENDS: Backend[] = TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
/** Both environments on every backend, for rules that must hold in each: [environment, backend]. */
export const ENVIRONMENTS_ON_BACKENDS: [Environment, Backend][] = BACKENDS.flatMap((backend) =>
  (['production', 'sandbox'] as const).map((environment): [Environment, Backend] => [environment, backend]),
);

let template: Promise<Blob> | undefined;

/** The migrated template every PGlite test database starts from (test/support/globalSetup.ts), read once. */
function pgliteTemplate(): Promise<Blob> {
  template ??= readFile(inject('pgliteTemplatePath')).then((bytes) => new Blob([bytes]));
  return template;
}

export interface TestDatabase {
  store: Store;
  /** The schema on the PostgreSQL server, for tests that open more connections to the same database. */
  schema: string | undefined;
  /**
   * On PostgreSQL, a connection string to this database with its schema first on the search_path, for
   * connections and processes the test opens besides `store`.
   */
  url: string | undefined;
  close(): Promise<void>;
}

/** `empty`: a database with no migrations applied (the PGlite template already has them all). */
export async function openTestDatabase(
  backend: Backend,
  options: { empty?: boolean } = {},
): Promise<TestDatabase> {
  if (backend === 'pglite') {
    const store = await openPgliteStore(
      undefined,
      options.empty ? {} : { loadDataDir: await pgliteTemplate() },
    );
    return { store, schema: undefined, url: undefined, close: () => store.close() };
  }
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const database = await createPostgresTestDatabase(
    TEST_DATABASE_URL,
    options.empty ? undefined : inject('postgresTemplateDatabase'),
  );
  const store = await openPostgresStore({ connectionString: database.url, schema: database.schema });
  return {
    store,
    schema: database.schema,
    url: database.url,
    async close() {
      await store.close();
      await database.drop();
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
  /** The organization `key` belongs to. */
  organizationId: string;
  /** The master key sealing this app's secrets (base64), for processes that must open them too. */
  encryptionKey: string;
  close(): Promise<void>;
}

/** A bucket that no test of another feature empties. */
const UNREACHED_BUCKET = { capacity: 1_000_000, refillPerSecond: 1_000_000 };

/**
 * Rate limits stay on in every test app, so their hooks and fields run under every test, with buckets
 * that tests of other features (hundreds of failed authentications, bursts of parallel writes) never
 * empty. test/rate-limit.test.ts passes its own settings.
 */
export const TEST_RATE_LIMITS: RateLimitSettings = {
  ...defaultRateLimitSettings('sandbox'),
  key: UNREACHED_BUCKET,
  organization: UNREACHED_BUCKET,
  authFailures: UNREACHED_BUCKET,
};

export interface TestAppOptions {
  /**
   * MKOBA_WEBHOOK_ALLOW_PRIVATE=1 (sandbox only): webhook URLs may point at this machine, as tests with a
   * local receiver need. Off by default, as in a real sandbox.
   */
  allowPrivateWebhookUrls?: boolean;
  /** Rate limits other than TEST_RATE_LIMITS (test/rate-limit.test.ts). */
  rateLimits?: RateLimitSettings;
  /** Ledger writer lanes other than the default for the backend. */
  ledgerWriterLanes?: number;
}

export async function startTestApp(
  backend: Backend,
  environment: Environment = 'sandbox',
  options: TestAppOptions = {},
): Promise<TestApp> {
  const db = await openTestDatabase(backend);
  const masterKey = randomBytes(MASTER_KEY_BYTES);
  // As a serving process has it: with traces on (test/tracing.test.ts), its statements are spans.
  const deps = systemDeps(tracedStore(db.store), environment, {
    keyring: keyringOf(new Uint8Array(masterKey)),
    allowPrivateWebhookUrls: options.allowPrivateWebhookUrls ?? false,
    railPartnerFactories: PARTNER_RAIL_FACTORIES,
  });
  await migrate(db.store);
  let key: string;
  let organizationId: string;
  if (environment === 'sandbox') {
    const seeded = await seedSandbox(deps, undefined);
    if (!seeded.apiKey) throw new Error('seed did not return a key');
    key = seeded.apiKey;
    const organization = await findOrganizationByName(db.store, SANDBOX_ORGANIZATION_NAME);
    if (!organization) throw new Error('seed did not create its organization');
    organizationId = organization.id;
  } else {
    const issued = await issueApiKey(deps, { organizationName: 'Production Org' });
    key = issued.key;
    organizationId = issued.record.organizationId;
  }
  const app = await buildApp({
    deps,
    rateLimits: options.rateLimits ?? TEST_RATE_LIMITS,
    ledgerWriterLanes: options.ledgerWriterLanes,
  });
  return {
    backend,
    app,
    deps,
    db,
    key,
    organizationId,
    encryptionKey: masterKey.toString('base64'),
    async close() {
      closeRailPartnerDirectory(deps);
      await app.close();
      await db.close();
    },
  };
}

/** The operator's switch (`mkoba orgs set-webhooks`): production organizations start with it off. */
export async function setWebhookSubscriptions(t: TestApp, organizationId: string, enabled: boolean) {
  const result = await runAdminCommand(t.deps, { name: 'orgs.set-webhooks', organizationId, enabled });
  if (result.name !== 'orgs.set-webhooks' || !result.found)
    throw new Error(`no organization ${organizationId}`);
}

/** A new organization with its own key, for isolation tests. */
export async function newOrganizationKey(t: TestApp, scopes?: Scope[]): Promise<string> {
  const name = `Org ${randomBytes(4).toString('hex')}`;
  return (await issueApiKey(t.deps, { organizationName: name, scopes })).key;
}

/** Who runs the operator's CLI in tests: keys issued through it record `operator:test-operator`. */
export const TEST_OPERATOR = 'test-operator';

/**
 * A compliance officer's key in the test app's organization: a new member with the `compliance` role, and a
 * key acting for them issued through the operator's CLI path (`mkoba keys create --member`). Reviews and
 * freezes are a person's decisions: a key that acts for no member never takes them, whatever its scopes.
 */
export async function complianceKey(t: TestApp): Promise<string> {
  const organization = await findOrganizationByName(t.db.store, SANDBOX_ORGANIZATION_NAME);
  if (t.deps.environment !== 'sandbox' || !organization) {
    throw new Error('complianceKey needs the seeded sandbox organization');
  }
  const email = `compliance-${randomBytes(4).toString('hex')}@example.com`;
  await runAdminCommand(t.deps, {
    name: 'members.add',
    organization: SANDBOX_ORGANIZATION_NAME,
    email,
    roles: ['compliance'],
  });
  const issued = await runAdminCommand(t.deps, {
    name: 'keys.create',
    organization: SANDBOX_ORGANIZATION_NAME,
    member: email,
    operator: TEST_OPERATOR,
  });
  if (issued.name !== 'keys.create') throw new Error('key not created');
  return issued.key;
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
