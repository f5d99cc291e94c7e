/**
 * Lists' `Consistency-Token` and the routing of their reads (src/http/replicaReads.ts,
 * src/store/readReplica.ts), without a streaming replica (test/ha/read-replica.test.ts has one): on both
 * backends a list takes a well-formed token and refuses another, naming the header, and without a replica
 * no write answers with one. On PostgreSQL, with a "replica" that is a second pool on the same database,
 * writes answer with a token and lists read your writes; with a replica that refuses connections, lists
 * are answered by the primary, never a 500, and writes never reach it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../src/app/deps.ts';
import { seedSandbox } from '../src/app/seed.ts';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { keyringOf } from '../src/domain/sealing.ts';
import { buildApp } from '../src/http/app.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPostgresStore } from '../src/store/postgres.ts';
import { withReadReplica } from '../src/store/readReplica.ts';
import {
  api,
  BACKENDS,
  openTestDatabase,
  startTestApp,
  TEST_DATABASE_URL,
  TEST_RATE_LIMITS,
  type TestApp,
} from './support/harness.ts';

const WAL_POSITION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;
/** An address nothing listens on: the replica is down. */
const REFUSING_REPLICA_URL = 'postgres://postgres@127.0.0.1:9/postgres';

describe('DATABASE_READ_URL', () => {
  const primary = 'postgres://mkoba@db.internal:5432/mkoba';
  it('is a PostgreSQL URL beside DATABASE_URL, or a start-up error naming it', () => {
    const replica = 'postgres://mkoba@replica.internal:5432/mkoba';
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseReadUrl).toBe(replica);
    expect(loadConfig({ DATABASE_URL: primary }).databaseReadUrl).toBeUndefined();
    for (const env of [
      { DATABASE_READ_URL: replica },
      { DATABASE_URL: primary, DATABASE_READ_URL: 'mysql://x' },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/^DATABASE_READ_URL: /);
    }
  });
});

describe.each(BACKENDS)('a list’s Consistency-Token on %s, without a replica', (backend) => {
  let t: TestApp | undefined;
  afterAll(async () => {
    await t?.close();
  });

  it('takes a WAL position, refuses anything else naming the header, and writes carry none', async () => {
    t = await startTestApp(backend, 'sandbox');
    const created = await api(t, 'POST', '/v1/customers', {
      body: { type: 'individual', name: 'No Replica' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.headers['consistency-token']).toBeUndefined();
    const listed = await api(t, 'GET', '/v1/customers', { headers: { 'consistency-token': '0/16B3748' } });
    expect(listed.statusCode).toBe(200);
    expect(listed.data.data.map((c: { id: string }) => c.id)).toContain(created.data.id);
    for (const token of ['latest', '0/', '1/2/3', 'G/1', '123456789/1']) {
      const refused = await api(t, 'GET', '/v1/transfers', { headers: { 'consistency-token': token } });
      expect(refused.statusCode, token).toBe(400);
      expect(refused.data).toMatchObject({ code: 'validation_error', param: 'Consistency-Token' });
    }
  });
});

/**
 * A sandbox app whose lists read through `replicaUrl` (undefined: the app's own database, as a replica that
 * is never behind), on a database of its own.
 */
async function appWithReplica(replicaUrl: string | undefined) {
  const db = await openTestDatabase('postgres');
  const replica = await openPostgresStore({
    connectionString: replicaUrl ?? (db.url as string),
    schema: db.schema,
  });
  const { store, readReplica } = withReadReplica(db.store, replica);
  const deps = systemDeps(store, 'sandbox', {
    keyring: keyringOf(new Uint8Array(randomBytes(32))),
    readReplica,
  });
  await migrate(store);
  const seeded = await seedSandbox(deps, undefined);
  const app = await buildApp({ deps, rateLimits: TEST_RATE_LIMITS });
  return {
    app,
    key: seeded.apiKey as string,
    async close() {
      await app.close();
      await replica.close();
      await db.close();
    },
  };
}

describe.runIf(TEST_DATABASE_URL)('lists through a read replica on postgres', () => {
  const opened: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const each of opened) await each.close();
  });

  const call = (
    target: Awaited<ReturnType<typeof appWithReplica>>,
    method: 'GET' | 'POST',
    url: string,
    options: { body?: unknown; headers?: Record<string, string> } = {},
  ) => api({ app: target.app, key: target.key } as TestApp, method, url, options);

  it('answers writes with the primary’s position, and a list given it has the write', async () => {
    const target = await appWithReplica(undefined);
    opened.push(target);
    const created = await call(target, 'POST', '/v1/customers', {
      body: { type: 'individual', name: 'Token' },
    });
    expect(created.statusCode).toBe(201);
    const token = created.headers['consistency-token'] as string;
    expect(token).toMatch(WAL_POSITION);
    const listed = await call(target, 'GET', '/v1/customers', { headers: { 'consistency-token': token } });
    expect(listed.statusCode).toBe(200);
    expect(listed.data.data.map((c: { id: string }) => c.id)).toContain(created.data.id);
  });

  it('answers lists from the primary while the replica refuses connections, and writes never wait on it', async () => {
    const target = await appWithReplica(REFUSING_REPLICA_URL);
    opened.push(target);
    const created = await call(target, 'POST', '/v1/customers', {
      body: { type: 'individual', name: 'Down' },
    });
    expect(created.statusCode).toBe(201);
    const token = created.headers['consistency-token'] as string;
    const tokens: Record<string, string>[] = [{}, { 'consistency-token': token }, {}];
    for (const headers of tokens) {
      const listed = await call(target, 'GET', '/v1/customers', { headers });
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.data.data.map((c: { id: string }) => c.id)).toContain(created.data.id);
    }
    const wallets = await call(target, 'GET', '/v1/wallets');
    expect(wallets.statusCode, wallets.body).toBe(200);
  });
});
