/**
 * PostgreSQL time-outs: a request that would wait on another transaction's lock, or run a statement too
 * long, gets a 503 problem with Retry-After instead of hanging (and holding a connection) or a 500; a
 * transaction left idle holds its locks only until the idle time-out ends its session. The settings are
 * named in the configuration and read from the environment.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../src/app/deps.ts';
import { SANDBOX_ORGANIZATION_NAME, seedSandbox } from '../src/app/seed.ts';
import {
  PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  PG_LOCK_TIMEOUT_MS,
  PG_STATEMENT_TIMEOUT_MS,
} from '../src/config/postgres.ts';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { SQLSTATE } from '../src/domain/databaseErrors.ts';
import { buildApp } from '../src/http/app.ts';
import { toAppError } from '../src/http/problems.ts';
import { MIGRATION_LOCK_KEY, migrate } from '../src/store/migrate.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import { findOrganizationByName } from '../src/store/repositories/organizations.ts';
import { api, TEST_DATABASE_URL, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

/** Short time-outs for the test's own server, so each case takes about a second. */
const TEST_LOCK_TIMEOUT_MS = 500;
const TEST_STATEMENT_TIMEOUT_MS = 500;
/** Shorter than the lock time-out: a request waiting on an idle transaction's lock outlives it. */
const TEST_IDLE_TIMEOUT_MS = 200;
/** How much later than its time-out a refused request may answer on a busy machine. */
const ANSWER_SLACK_MS = 5_000;

/** How long the deadlock test's request holds its first lock before asking for the second. */
const DEADLOCK_PAUSE_MS = 300;
/** An advisory lock key no other test takes. */
const randomLockKey = () => randomBytes(6).readUIntBE(0, 6);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL time-out settings', () => {
  const variables = {
    MKOBA_PG_STATEMENT_TIMEOUT_MS: 'statementTimeoutMs',
    MKOBA_PG_LOCK_TIMEOUT_MS: 'lockTimeoutMs',
    MKOBA_PG_IDLE_IN_TX_TIMEOUT_MS: 'idleInTransactionTimeoutMs',
  } as const;

  it('default to the named constants', () => {
    expect(loadConfig({}).postgres).toEqual({
      statementTimeoutMs: PG_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: PG_LOCK_TIMEOUT_MS,
      idleInTransactionTimeoutMs: PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    });
  });

  it.each(Object.entries(variables))('%s sets %s, 0 for none', (variable, field) => {
    expect(loadConfig({ [variable]: '1234' }).postgres[field]).toBe(1234);
    expect(loadConfig({ [variable]: '0' }).postgres[field]).toBe(0);
  });

  it.each(Object.keys(variables))(
    '%s must be whole milliseconds within what PostgreSQL accepts',
    (variable) => {
      for (const bad of ['abc', '-1', '1.5', '2147483648', '1e3']) {
        expect(() => loadConfig({ [variable]: bad })).toThrow(ConfigError);
        expect(() => loadConfig({ [variable]: bad })).toThrow(variable);
      }
    },
  );

  it.each([
    SQLSTATE.queryCanceled,
    SQLSTATE.lockNotAvailable,
    SQLSTATE.idleInTransactionSessionTimeout,
    SQLSTATE.deadlockDetected,
    SQLSTATE.serializationFailure,
  ])('SQLSTATE %s is a 503 service_unavailable with Retry-After', (code) => {
    const error = toAppError(Object.assign(new Error('from the database'), { code }));
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', retryAfterSeconds: 1 });
    expect(error.detail).not.toContain('from the database');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL time-outs on a live server', () => {
  const databaseUrl = TEST_DATABASE_URL as string;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let t: TestApp;
  /** A second session, as another process holding locks would be. */
  let other: pg.Client;

  beforeAll(async () => {
    await createSchema(databaseUrl, schema);
    const store = await openPostgresStore({
      connectionString: databaseUrl,
      schema,
      lockTimeoutMs: TEST_LOCK_TIMEOUT_MS,
      statementTimeoutMs: TEST_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: TEST_IDLE_TIMEOUT_MS,
    });
    const deps = systemDeps(store, 'sandbox');
    await migrate(store);
    const seeded = await seedSandbox(deps, undefined);
    const app = await buildApp({ deps });
    const db = {
      store,
      schema,
      url: undefined,
      close: async () => {
        await store.close();
        await dropSchema(databaseUrl, schema);
      },
    };
    t = {
      backend: 'postgres',
      app,
      deps,
      db,
      key: seeded.apiKey as string,
      organizationId: (await findOrganizationByName(store, SANDBOX_ORGANIZATION_NAME))?.id ?? '',
      // No keyring: this app seals nothing.
      encryptionKey: '',
      close: async () => {
        await app.close();
        await db.close();
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

  const pay = (source: string, idempotencyKey: string) =>
    api(t, 'POST', '/v1/transfers', {
      headers: { 'idempotency-key': idempotencyKey },
      body: { source, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
    });

  it('a transfer from a wallet whose account another transaction holds is a 503 within the lock time-out, and goes through once released', async () => {
    const locked = await fundedWallet(t, '100.00');
    const free = await fundedWallet(t, '100.00');
    await other.query('BEGIN');
    await other.query('SELECT id FROM ledger_accounts WHERE id = $1 FOR UPDATE', [locked]);
    try {
      const started = Date.now();
      const refused = await pay(locked, 'lock-1');
      const elapsed = Date.now() - started;
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.data).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(elapsed).toBeGreaterThanOrEqual(TEST_LOCK_TIMEOUT_MS);
      expect(elapsed).toBeLessThan(TEST_LOCK_TIMEOUT_MS + ANSWER_SLACK_MS);

      // Other wallets are not held up meanwhile.
      expect((await pay(free, 'free-1')).statusCode).toBe(201);
    } finally {
      await other.query('ROLLBACK');
    }

    // Released: the same request, under the same key, now goes through (the refusal was not recorded).
    const accepted = await pay(locked, 'lock-1');
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.headers['idempotent-replayed']).toBeUndefined();
    expect(await balanceOf(t, locked)).toMatchObject({ available: '90.00', pending: '10.00' });
  });

  it('a statement that runs past the statement time-out is a 503, and nothing is written', async () => {
    // Makes creating one named customer slow, as a pathological statement would be.
    await other.query(`
      CREATE FUNCTION test_slow_customer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name = 'Slow Customer' THEN PERFORM pg_sleep(${(TEST_STATEMENT_TIMEOUT_MS * 4) / 1000}); END IF;
        RETURN NEW;
      END;
      $$;
      CREATE TRIGGER test_slow_customer BEFORE INSERT ON customers
        FOR EACH ROW EXECUTE FUNCTION test_slow_customer();
    `);
    try {
      const started = Date.now();
      const refused = await api(t, 'POST', '/v1/customers', {
        body: { type: 'individual', name: 'Slow Customer' },
      });
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.data.code).toBe('service_unavailable');
      expect(refused.headers['retry-after']).toBe('1');
      expect(Date.now() - started).toBeLessThan(TEST_STATEMENT_TIMEOUT_MS + ANSWER_SLACK_MS);
      const listed = await api(t, 'GET', '/v1/customers?limit=100');
      expect(listed.data.data.map((c: { name: string }) => c.name)).not.toContain('Slow Customer');
    } finally {
      await other.query('DROP TRIGGER test_slow_customer ON customers; DROP FUNCTION test_slow_customer()');
    }
  });

  it('a request PostgreSQL ends as a deadlock victim is a 503 with Retry-After, nothing is written, and the retry goes through', async () => {
    const [first, second] = [randomLockKey(), randomLockKey()];
    // Creating one named customer takes two locks with a pause between; the other session takes them in the
    // opposite order. This request checks for the deadlock first (50 ms, the other after the default 1 s), so
    // it is the one PostgreSQL rolls back.
    await other.query(`
      CREATE FUNCTION test_deadlock_customer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.name = 'Deadlock Customer' THEN
          PERFORM pg_advisory_xact_lock(${first});
          PERFORM pg_sleep(${DEADLOCK_PAUSE_MS / 1000});
          PERFORM set_config('deadlock_timeout', '50ms', true);
          PERFORM pg_advisory_xact_lock(${second});
        END IF;
        RETURN NEW;
      END;
      $$;
      CREATE TRIGGER test_deadlock_customer BEFORE INSERT ON customers
        FOR EACH ROW EXECUTE FUNCTION test_deadlock_customer();
    `);
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_advisory_xact_lock($1)', [second]);
      const request = api(t, 'POST', '/v1/customers', {
        headers: { 'idempotency-key': 'deadlock-1' },
        body: { type: 'individual', name: 'Deadlock Customer' },
      });
      await sleep(DEADLOCK_PAUSE_MS / 2);
      const waiting = other.query('SELECT pg_advisory_xact_lock($1)', [first]);
      const refused = await request;
      await waiting;
      await other.query('ROLLBACK');
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.data).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(refused.body).not.toMatch(/deadlock detected|40P01/);
      const listed = await api(t, 'GET', '/v1/customers?limit=100');
      expect(listed.data.data.map((c: { name: string }) => c.name)).not.toContain('Deadlock Customer');

      // Nothing was recorded under the key: the same request, now alone, is carried out.
      const accepted = await api(t, 'POST', '/v1/customers', {
        headers: { 'idempotency-key': 'deadlock-1' },
        body: { type: 'individual', name: 'Deadlock Customer' },
      });
      expect(accepted.statusCode, accepted.body).toBe(201);
      expect(accepted.headers['idempotent-replayed']).toBeUndefined();
    } finally {
      await other.query('ROLLBACK');
      await other.query(
        'DROP TRIGGER test_deadlock_customer ON customers; DROP FUNCTION test_deadlock_customer()',
      );
    }
  });

  it('migrating waits for another process migrating, however long, and is not cut short by the time-outs', async () => {
    const heldMs = TEST_LOCK_TIMEOUT_MS * 2;
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const release = sleep(heldMs).then(() =>
      other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]),
    );
    const started = Date.now();
    try {
      expect(await migrate(t.deps.store)).toEqual({ applied: [] });
      expect(Date.now() - started).toBeGreaterThanOrEqual(heldMs - 50);
    } finally {
      await release;
    }
  });

  it('a transaction left idle is ended by the idle time-out, releasing its locks, and reports 25P03', async () => {
    const wallet = await fundedWallet(t, '100.00');
    // A stuck batch: it locks the wallet's account, then waits on something that never comes back in time.
    const stuck = t.deps.store.transaction(async (tx) => {
      await tx.query('SELECT id FROM ledger_accounts WHERE id = $1 FOR UPDATE', [wallet]);
      await sleep(TEST_IDLE_TIMEOUT_MS + TEST_LOCK_TIMEOUT_MS * 2);
      await tx.query('SELECT 1');
    });
    const stuckOutcome = stuck.then(
      () => undefined,
      (error: unknown) => error,
    );
    await sleep(TEST_IDLE_TIMEOUT_MS / 4);
    // Waits on the stuck transaction's lock only until its session is ended.
    const paid = await pay(wallet, 'idle-1');
    expect(paid.statusCode, paid.body).toBe(201);

    const error = await stuckOutcome;
    expect(error).toMatchObject({ code: SQLSTATE.idleInTransactionSessionTimeout });
    expect(toAppError(error)).toMatchObject({ status: 503, code: 'service_unavailable' });
    // The pool replaced the ended connection.
    expect(await t.deps.store.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
