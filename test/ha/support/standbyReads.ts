/**
 * Lists from the Patroni standby (DATABASE_READ_URL on HAProxy's standby frontend) in the failover test:
 * proof that a list is the standby's (its replay paused, a list without a token is its older page, and the
 * write's Consistency-Token gets the primary's), a client reading lists through the switch, and lists once
 * no standby is left (the old primary down), which the primary answers.
 */
import pg from 'pg';
import { expect } from 'vitest';
import { REPLICA_RETRY_AFTER_MS } from '../../../src/config/postgres.ts';
import { sleep, waitFor } from './daemon.ts';

/** How long the standby may take to replay a write once replay runs again. */
const REPLAY_WAIT_MS = 20_000;
/** Between one list and the next of the client reading through the switch. */
const LIST_INTERVAL_MS = 100;

export interface ListAttempt {
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or what went wrong before one came. */
  status: number | string;
  retryAfter: string | null;
}

interface Listed {
  status: number;
  ids: string[];
  elapsedMs: number;
}

async function listCustomers(base: string, apiKey: string, token?: string): Promise<Listed> {
  const startedAt = Date.now();
  const response = await fetch(`${base}/customers?limit=100`, {
    headers: { authorization: `Bearer ${apiKey}`, ...(token ? { 'consistency-token': token } : {}) },
  });
  const body = (await response.json()) as { data?: { id: string }[] };
  return {
    status: response.status,
    ids: (body.data ?? []).map((c) => c.id),
    elapsedMs: Date.now() - startedAt,
  };
}

/** A new customer through the API: its id and the write's Consistency-Token. */
async function newCustomer(
  base: string,
  apiKey: string,
  name: string,
): Promise<{ id: string; token: string }> {
  const response = await fetch(`${base}/customers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'individual', name }),
  });
  const body = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  const token = response.headers.get('consistency-token');
  expect(token).toBeTruthy();
  return { id: body.id, token: token as string };
}

/**
 * With the standby's replay paused, every server's list without a token lacks a new customer (the
 * standby's page), and with the write's token has it (the primary's, after the bounded wait); once replay
 * runs again the standby's list has it too. Patroni must be in maintenance mode, or it resumes the replay.
 */
export async function expectListsFromStandby(
  servers: string[],
  apiKey: string,
  standbyUrl: string,
): Promise<void> {
  // Each server's replica pool connects before the pause.
  for (const base of servers) expect((await listCustomers(base, apiKey)).status).toBe(200);
  const standby = new pg.Client({ connectionString: standbyUrl });
  await standby.connect();
  try {
    const [row] = (await standby.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows;
    expect(row?.standby).toBe(true);
    await standby.query('SELECT pg_wal_replay_pause()');
    let written: { id: string; token: string };
    try {
      written = await newCustomer(servers[0] as string, apiKey, 'Written While Replay Paused');
      for (const base of servers) {
        // A replica slow to take its first connection is skipped for a while: its page comes after that.
        await waitFor(
          async () => !(await listCustomers(base, apiKey)).ids.includes(written.id),
          REPLICA_RETRY_AFTER_MS * 2,
          `a list from ${base} without the customer the paused standby has not replayed`,
        );
        const fresh = await listCustomers(base, apiKey, written.token);
        expect(fresh.status).toBe(200);
        expect(fresh.ids).toContain(written.id);
      }
    } finally {
      await standby.query('SELECT pg_wal_replay_resume()');
    }
    await waitFor(
      async () => (await standby.query('SELECT 1 FROM customers WHERE id = $1', [written.id])).rowCount === 1,
      REPLAY_WAIT_MS,
      'the standby to replay the customer',
    );
    for (const base of servers) expect((await listCustomers(base, apiKey)).ids).toContain(written.id);
  } finally {
    await standby.end();
  }
}

export interface ListLoad {
  attempts: ListAttempt[];
  stop(): Promise<void>;
}

/** One client listing transfers, from each server in turn, until stopped. */
export function startListLoad(servers: string[], apiKey: string, requestBoundMs: number): ListLoad {
  const attempts: ListAttempt[] = [];
  let running = true;
  const client = (async () => {
    for (let i = 0; running; i++) {
      const startedAt = Date.now();
      try {
        const response = await fetch(`${servers[i % servers.length]}/transfers?limit=10`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(requestBoundMs),
        });
        await response.arrayBuffer();
        attempts.push({
          startedAt,
          endedAt: Date.now(),
          status: response.status,
          retryAfter: response.headers.get('retry-after'),
        });
      } catch (error) {
        attempts.push({ startedAt, endedAt: Date.now(), status: String(error), retryAfter: null });
      }
      await sleep(LIST_INTERVAL_MS);
    }
  })();
  return {
    attempts,
    async stop() {
      running = false;
      await client;
    },
  };
}

/**
 * With no standby behind the standby frontend, every server's lists answer 200 with a customer written
 * now, with and without its token, each within `boundMs`; the slowest, in ms.
 */
export async function expectListsWithoutStandby(
  servers: string[],
  apiKey: string,
  boundMs: number,
): Promise<number> {
  const written = await newCustomer(servers[0] as string, apiKey, 'Written With No Standby');
  let slowestMs = 0;
  for (const base of servers) {
    for (const token of [undefined, written.token, undefined]) {
      const listed = await listCustomers(base, apiKey, token);
      expect(listed.status).toBe(200);
      expect(listed.ids).toContain(written.id);
      expect(listed.elapsedMs).toBeLessThan(boundMs);
      slowestMs = Math.max(slowestMs, listed.elapsedMs);
    }
  }
  return slowestMs;
}
