/**
 * A database that is not there (a failover, a restart, a proxy with no primary behind it) is a 503 problem
 * with Retry-After, never a 500: a refused connection, one lost under a request, a server shutting down or
 * read-only. A request whose connection is lost is retried under its Idempotency-Key and carried out once.
 * The whole failover, with Patroni, is test/ha/failover.test.ts (`npm run test:ha`).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../src/app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from '../src/app/seed.ts';
import { PG_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../src/config/postgres.ts';
import { isDatabaseUnavailable, SQLSTATE } from '../src/domain/databaseErrors.ts';
import { buildApp } from '../src/http/app.ts';
import { toAppError } from '../src/http/problems.ts';
import { migrate } from '../src/store/migrate.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import { findOrganizationByName } from '../src/store/repositories/organizations.ts';
import { api, TEST_DATABASE_URL, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

/** Long enough for the test to find the waiting request's session and end it. */
const TEST_LOCK_TIMEOUT_MS = 20_000;
const WAIT_POLL_MS = 50;

const unavailable: [string, Error][] = [
  [
    'a refused connection',
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
  ],
  ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
  ['a connection ended under a query', new Error('Connection terminated unexpectedly')],
  [
    'a client the driver gave up on',
    new Error('Client has encountered a connection error and is not queryable'),
  ],
  [
    'a server shutting down',
    Object.assign(new Error('terminating connection'), { code: SQLSTATE.adminShutdown }),
  ],
  [
    'a server that crashed',
    Object.assign(new Error('terminating connection'), { code: SQLSTATE.crashShutdown }),
  ],
  [
    'a server starting up',
    Object.assign(new Error('the database system is starting up'), { code: SQLSTATE.cannotConnectNow }),
  ],
  [
    'a write on a standby',
    Object.assign(new Error('read-only transaction'), { code: SQLSTATE.readOnlySqlTransaction }),
  ],
  ['a connection exception', Object.assign(new Error('connection failure'), { code: '08006' })],
];

describe('an unavailable database', () => {
  it.each(unavailable)('%s is a 503 service_unavailable with Retry-After', (_, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
    const problem = toAppError(error);
    expect(problem).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      retryAfterSeconds: PG_UNAVAILABLE_RETRY_AFTER_SECONDS,
    });
    expect(problem.detail).toContain('Idempotency-Key');
    expect(problem.detail).not.toContain(error.message);
  });

  it('anything else stays what it was: a bug is a 500, not a retry', () => {
    for (const error of [
      new Error('Connection terminated unexpectedly, said no driver'),
      Object.assign(new Error('relation does not exist'), { code: '42P01' }),
      Object.assign(new Error('a socket error of the application'), { code: 'EACCES' }),
    ]) {
      expect(isDatabaseUnavailable(error)).toBe(false);
      expect(toAppError(error).status).toBe(500);
    }
  });

  it('a server that refuses connections: a request is a 503 with Retry-After', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const store = await openPostgresStore({
      connectionString: `postgres://postgres@127.0.0.1:${closedPort}/none`,
    });
    const app = await buildApp({ deps: systemDeps(store, 'sandbox') });
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/customers',
        headers: { authorization: `Bearer sk_sandbox_${'a'.repeat(32)}`, 'idempotency-key': 'refused-1' },
        payload: { type: 'individual', name: 'Nobody' },
      });
      expect(response.statusCode, response.body).toBe(503);
      expect(response.headers['retry-after']).toBe(String(PG_UNAVAILABLE_RETRY_AFTER_SECONDS));
      expect(response.json()).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      await app.close();
      await store.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('a connection lost under a request, on a live server', () => {
  const databaseUrl = TEST_DATABASE_URL as string;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let t: TestApp;
  /** Another session, holding the lock the request waits on and ending the request's session. */
  let other: pg.Client;

  beforeAll(async () => {
    await createSchema(databaseUrl, schema);
    const store = await openPostgresStore({
      connectionString: databaseUrl,
      schema,
      lockTimeoutMs: TEST_LOCK_TIMEOUT_MS,
    });
    const deps = systemDeps(store, 'sandbox');
    await migrate(store);
    const seeded = await seedSandbox(deps, undefined);
    const app = await buildApp({ deps });
    t = {
      backend: 'postgres',
      app,
      deps,
      db: { store, schema, url: undefined, close: async () => {} },
      key: seeded.apiKey as string,
      organizationId: (await findOrganizationByName(store, SANDBOX_ORGANIZATION_NAME))?.id ?? '',
      encryptionKey: '',
      close: async () => {
        await app.close();
        await store.close();
        await dropSchema(databaseUrl, schema);
      },
    };
    other = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
    await other.connect();
  });

  afterAll(async () => {
    await other?.end();
    if (t) {
      await expectLedgerHealthy(t);
      await t.close();
    }
  });

  it('is a 503; the retry under the same key is carried out once, and the pool serves on', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const pay = () =>
      api(t, 'POST', '/v1/transfers', {
        headers: { 'idempotency-key': 'lost-1' },
        body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
      });
    await other.query('BEGIN');
    await other.query('SELECT id FROM ledger_accounts WHERE id = $1 FOR UPDATE', [wallet]);
    let answer: ReturnType<typeof pay>;
    try {
      answer = pay();
      // The request's session, waiting on the lock held here, is ended as a failover would end it.
      let ended = false;
      while (!ended) {
        const waiting = await other.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
        );
        for (const row of waiting.rows) {
          await other.query('SELECT pg_terminate_backend($1)', [row.pid]);
          ended = true;
        }
        if (!ended) await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      }
      const refused = await answer;
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['retry-after']).toBe(String(PG_UNAVAILABLE_RETRY_AFTER_SECONDS));
      expect(refused.data).toMatchObject({ status: 503, code: 'service_unavailable' });
    } finally {
      await other.query('ROLLBACK');
    }
    const accepted = await pay();
    expect(accepted.statusCode, accepted.body).toBe(201);
    const replayed = await pay();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.data.id).toBe(accepted.data.id);
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '90.00', pending: '10.00' });
  });
});
