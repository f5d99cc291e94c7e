/**
 * DATABASE_READ_URL against a real streaming replica: a fresh primary and a replica of it
 * (test/ha/support/replica.ts), and a real `mkoba serve` on both. With the replica's replay paused
 * (`pg_wal_replay_pause()`), a list without a token is the replica's older page, which proves lists read
 * there; a list with a write's `Consistency-Token` waits for the replica, then the primary answers it with
 * the write; once the replica has replayed a token, the replica answers (a newer write it has not replayed
 * is absent). Writes, reads by id, idempotency and key authentication stay on the primary: a key revoked
 * there is refused on a list while the replica still holds it active. With the replica stopped, lists are
 * the primary's, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemDeps } from '../../src/app/deps.ts';
import { READ_YOUR_WRITES_WAIT_MS } from '../../src/config/postgres.ts';
import { issueApiKey } from '../../src/modules/apiKeys/useCases/keys.ts';
import { openPostgresStore } from '../../src/store/postgres.ts';
import type { Store } from '../../src/store/store.ts';
import { TEST_DATABASE_URL } from '../support/harness.ts';
import { type ServerProcess, startServerProcess } from '../support/serverProcess.ts';
import { type PrimaryWithReplica, startPrimaryWithReplica } from './support/replica.ts';

/** Two clusters created and a server started on a busy machine. */
const SETUP_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = 60_000;
/** How long the replica may take to replay a write while replay runs. */
const REPLAY_WAIT_MS = 20_000;
const WAL_POSITION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

interface Answer {
  status: number;
  data: any;
  headers: Headers;
  elapsedMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// PostgreSQL's binaries are this machine's, as TEST_DATABASE_URL's server is.
describe.runIf(TEST_DATABASE_URL)('lists from a streaming replica', () => {
  let clusters: PrimaryWithReplica;
  let server: ServerProcess;
  let store: Store;
  let key: string;
  let readKey: { key: string; id: string };

  beforeAll(async () => {
    clusters = await startPrimaryWithReplica();
    server = await startServerProcess({
      DATABASE_URL: clusters.primary.url,
      DATABASE_READ_URL: clusters.replica.url,
      MKOBA_ENV: 'sandbox',
      MKOBA_SANDBOX_SIMULATORS: '0',
      MKOBA_RATE_LIMITS: 'off',
    });
    // Keys issued as the operator's CLI issues them, on the primary the server has migrated.
    store = await openPostgresStore({ connectionString: clusters.primary.url });
    const deps = systemDeps(store, 'sandbox');
    const organizationName = 'Replica Reads Ltd';
    key = (await issueApiKey(deps, { organizationName, scopes: ['read', 'write', 'admin'] })).key;
    const issued = await issueApiKey(deps, { organizationName, scopes: ['read'] });
    readKey = { key: issued.key, id: issued.record.id };
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await server?.stop();
    await store?.close();
    clusters?.remove();
  });

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; headers?: object; as?: string } = {},
  ) {
    const startedAt = Date.now();
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.as ?? key}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return {
      status: response.status,
      data: text ? JSON.parse(text) : undefined,
      headers: response.headers,
      elapsedMs: Date.now() - startedAt,
    } as Answer;
  }

  async function newCustomer(name: string): Promise<{ id: string; token: string }> {
    const created = await call('POST', '/v1/customers', { body: { type: 'individual', name } });
    expect(created.status, JSON.stringify(created.data)).toBe(201);
    const token = created.headers.get('consistency-token') ?? '';
    expect(token).toMatch(WAL_POSITION);
    return { id: created.data.id, token };
  }

  async function listedCustomers(token?: string): Promise<{ ids: string[]; answer: Answer }> {
    const answer = await call('GET', '/v1/customers?limit=100', {
      headers: token === undefined ? {} : { 'consistency-token': token },
    });
    expect(answer.status, JSON.stringify(answer.data)).toBe(200);
    return { ids: answer.data.data.map((c: { id: string }) => c.id), answer };
  }

  /** Waits until the replica itself has the customer (asked directly, not through the service). */
  async function replicaHas(id: string): Promise<void> {
    const deadline = Date.now() + REPLAY_WAIT_MS;
    for (;;) {
      const rows = await clusters.replica.query('SELECT 1 FROM customers WHERE id = $1', [id]);
      if (rows.length > 0) return;
      if (Date.now() > deadline) throw new Error(`the replica did not replay ${id} in ${REPLAY_WAIT_MS} ms`);
      await sleep(20);
    }
  }

  const pauseReplay = () => clusters.replica.query('SELECT pg_wal_replay_pause()');
  const resumeReplay = () => clusters.replica.query('SELECT pg_wal_replay_resume()');

  it('lists read the replica; a token reads your writes, from the replica once it has them', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const first = await newCustomer('First');
    expect((await listedCustomers(first.token)).ids).toContain(first.id);
    await replicaHas(first.id);

    await pauseReplay();
    try {
      // The write goes to the primary (a standby refuses writes) while the replica stands still.
      const second = await newCustomer('Second');
      const stale = await listedCustomers();
      expect(stale.ids).toContain(first.id);
      expect(stale.ids).not.toContain(second.id);
      // A read by id is the primary's.
      expect((await call('GET', `/v1/customers/${second.id}`)).status).toBe(200);
      // With the token: the replica cannot have it, so after the bounded wait the primary answers.
      const fresh = await listedCustomers(second.token);
      expect(fresh.ids).toContain(second.id);
      expect(fresh.answer.elapsedMs).toBeGreaterThanOrEqual(READ_YOUR_WRITES_WAIT_MS * 0.9);
    } finally {
      await resumeReplay();
    }

    const third = await newCustomer('Third');
    await replicaHas(third.id);
    await pauseReplay();
    try {
      const fourth = await newCustomer('Fourth');
      // The replica has replayed the third write's token: it answers, without the fourth it has not.
      const read = await listedCustomers(third.token);
      expect(read.ids).toContain(third.id);
      expect(read.ids).not.toContain(fourth.id);
      expect(read.answer.elapsedMs).toBeLessThan(READ_YOUR_WRITES_WAIT_MS);
    } finally {
      await resumeReplay();
    }
  });

  it('keeps authentication and idempotency on the primary: a key revoked there is refused on a list', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    expect((await call('GET', '/v1/customers', { as: readKey.key })).status).toBe(200);
    const marker = await newCustomer('Before the pause');
    await replicaHas(marker.id);
    await pauseReplay();
    try {
      const revoked = await call('POST', `/v1/api-keys/${readKey.id}/revoke`, { body: {} });
      expect(revoked.status, JSON.stringify(revoked.data)).toBe(200);
      // The replica still holds the key active; the list's authentication reads the primary.
      const refused = await call('GET', '/v1/customers', { as: readKey.key });
      expect(refused.status).toBe(401);
      expect(refused.data.code).toBe('api_key_revoked');
      // A retry under the same key finds the first answer on the primary, not the replica's absence of it.
      const headers = { 'idempotency-key': `replica-${Date.now()}` };
      const body = { type: 'individual', name: 'Once' };
      const once = await call('POST', '/v1/customers', { body, headers });
      const again = await call('POST', '/v1/customers', { body, headers });
      expect([once.status, again.status]).toEqual([201, 201]);
      expect(again.data.id).toBe(once.data.id);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await resumeReplay();
    }
  });

  it('refuses a token that is not a WAL position, naming the header', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const answer = await call('GET', '/v1/customers', { headers: { 'consistency-token': 'latest' } });
    expect(answer.status).toBe(400);
    expect(answer.data).toMatchObject({ code: 'validation_error', param: 'Consistency-Token' });
  });

  it('answers lists from the primary while the replica is down, never a 500', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    clusters.replica.stop();
    const written = await newCustomer('Replica down');
    for (const token of [undefined, written.token, undefined]) {
      const { ids, answer } = await listedCustomers(token);
      expect(ids).toContain(written.id);
      expect(answer.elapsedMs).toBeLessThan(READ_YOUR_WRITES_WAIT_MS * 5);
    }
    expect((await call('GET', '/v1/transfers')).status).toBe(200);
  });
});
