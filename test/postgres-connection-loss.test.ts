/**
 * A server that ends the store's sessions at any moment (a primary killed in a failover sends each of its
 * backends' clients FATAL 57P01, as pg_terminate_backend does) never crashes the process: every pooled
 * connection, idle, in a statement or between the statements of a transaction, has someone listening for
 * its 'error' event; the statements fail, and the pool serves on with new connections. A database of the
 * test's own, so only its sessions are ended. The whole failover is test/ha/failover.test.ts.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/store/postgres.ts';
import type { Store } from '../src/store/store.ts';
import { TEST_DATABASE_URL } from './support/harness.ts';

/** Clients running statements and transactions at once while their sessions are ended. */
const CLIENTS = 6;
const TERMINATION_ROUNDS = 40;
const BETWEEN_ROUNDS_MS_MAX = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!TEST_DATABASE_URL)('sessions ended by the server under load', () => {
  const database = `mkoba_connloss_${randomBytes(5).toString('hex')}`;
  let admin: pg.Client;
  let store: Store;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const url = new URL(TEST_DATABASE_URL as string);
    url.pathname = `/${database}`;
    store = await openPostgresStore({ connectionString: url.toString() });
  });

  afterAll(async () => {
    await store?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin?.end();
  });

  it('fail their statements, crash nothing, and the pool serves on', async () => {
    let running = true;
    let failed = 0;
    const client = async () => {
      while (running) {
        await store.query('SELECT 1').catch(() => (failed += 1));
        await store
          .transaction(async (tx) => {
            await tx.query('SELECT 1');
            // Idle in the transaction, between statements, for a termination to land there.
            await sleep(Math.random() * BETWEEN_ROUNDS_MS_MAX);
            await tx.query('SELECT 2');
          })
          .catch(() => (failed += 1));
      }
    };
    const clients = Array.from({ length: CLIENTS }, client);
    let terminated = 0;
    for (let round = 0; round < TERMINATION_ROUNDS; round++) {
      const rows = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      terminated += rows.rowCount ?? 0;
      await sleep(Math.random() * BETWEEN_ROUNDS_MS_MAX);
    }
    running = false;
    await Promise.all(clients);
    expect(terminated).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    expect(await store.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});
