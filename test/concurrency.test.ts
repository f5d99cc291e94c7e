/**
 * The posting path under contention. A wallet that can pay for exactly 20 of 50 concurrent transfers
 * accepts exactly 20 (in process on each backend, and across two real server processes sharing one
 * PostgreSQL database); one Idempotency-Key sent 20 times makes one transfer; and a storm of creates,
 * cancels, sandbox settles and fails and rail-worker passes leaves every invariant intact.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../src/domain/apiKeys.ts';
import { formatAmount } from '../src/domain/money.ts';
import { listJournalEntries } from '../src/modules/ledger/repository/ledger.ts';
import { verifyLedger } from '../src/modules/ledger/useCases/verify.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import type { RailAdapter, RailRegistry } from '../src/rails/rail.ts';
import { sandboxRails } from '../src/rails/sandbox.ts';
import { createSchema, dropSchema, openPostgresStore } from '../src/store/postgres.ts';
import { findApiKeyByHash } from '../src/store/repositories/apiKeys.ts';
import type { Store } from '../src/store/store.ts';
import { api, BACKENDS, startTestApp, TEST_DATABASE_URL, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { startServerProcess } from './support/serverProcess.ts';

/** Concurrent transfers fired at one wallet. */
const CONTENDED_TRANSFERS = 50;
/** How many of them the wallet can pay for. */
const AFFORDABLE_TRANSFERS = 20;
/** Each contended transfer's amount, in KES minor units. */
const TRANSFER_AMOUNT_MINOR = 10_00n;
/** Concurrent requests carrying one Idempotency-Key. */
const SAME_KEY_REQUESTS = 20;
/** A phone the sandbox rail leaves processing (rail time-out), so holds stay open until driven. */
const TIMEOUT_PHONE = '+254700000003';
const SETTLE_PHONE = '+254700000000';
const FAIL_PHONE = '+254700000001';
/** The storm: wallets, transfers made before it, creates during it, and concurrent rail-worker passes. */
const STORM_WALLETS = 4;
const STORM_EXISTING_TRANSFERS = 24;
const STORM_NEW_TRANSFERS = 40;
const STORM_RAIL_PASSES = 6;
/** How long the simulated rail takes to answer in the storm, so other writers get in while it is asked. */
const RAIL_LATENCY_MS = 5;

const kes = (minor: bigint) => formatAmount(minor, 'KES');

interface Reply {
  status: number;
  body: any;
  replayed: boolean;
}

/** Statuses and error codes of a set of replies, e.g. `{ '201': 20, '422 insufficient_funds': 30 }`. */
function tally(replies: readonly Reply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) {
    const label = r.status < 300 ? String(r.status) : `${r.status} ${r.body?.code}`;
    counts[label] = (counts[label] ?? 0) + 1;
  }
  return counts;
}

/**
 * Checks the 50-against-20 outcome from the replies and the balances afterwards: the wallet held
 * (mobile money) or paid (internal) exactly 20 amounts and nothing else moved.
 */
function expectExactlyAffordableAccepted(
  replies: readonly Reply[],
  balances: { source: any; destination: any },
): void {
  expect(tally(replies)).toEqual({
    '201': AFFORDABLE_TRANSFERS,
    '422 insufficient_funds': CONTENDED_TRANSFERS - AFFORDABLE_TRANSFERS,
  });
  const accepted = replies.filter((r) => r.status === 201).map((r) => r.body);
  expect(new Set(accepted.map((t) => t.id)).size).toBe(AFFORDABLE_TRANSFERS);
  const internal = BigInt(accepted.filter((t) => t.rail === 'internal').length);
  const held = BigInt(accepted.filter((t) => t.rail === 'mobile_money').length);
  for (const t of accepted) {
    expect(t).toMatchObject(
      t.rail === 'internal' ? { status: 'settled', ledger_state: 'posted' } : { status: 'pending' },
    );
  }
  const funded = TRANSFER_AMOUNT_MINOR * BigInt(AFFORDABLE_TRANSFERS);
  expect(balances.source).toMatchObject({
    available: kes(0n),
    pending: kes(held * TRANSFER_AMOUNT_MINOR),
    current: kes(funded - internal * TRANSFER_AMOUNT_MINOR),
  });
  expect(balances.destination).toMatchObject({
    available: kes(internal * TRANSFER_AMOUNT_MINOR),
    pending: kes(0n),
    current: kes(internal * TRANSFER_AMOUNT_MINOR),
  });
}

/** The i-th of the contended requests: mobile money and internal alternate. */
function contendedBody(i: number, source: string, destination: string) {
  return {
    source,
    destination: i % 2 === 0 ? mobileMoney(TIMEOUT_PHONE) : destination,
    amount: kes(TRANSFER_AMOUNT_MINOR),
    currency: 'KES',
    metadata: { n: String(i) },
  };
}

/** The sandbox rails, each answer delayed: a real rail is a network call, during which others move the transfer. */
function slowRails(): RailRegistry {
  const pause = () => new Promise((resolve) => setTimeout(resolve, RAIL_LATENCY_MS));
  const slow = (rail: RailAdapter): RailAdapter => ({
    async submit(transfer, now) {
      await pause();
      return rail.submit(transfer, now);
    },
    async check(transfer, now) {
      await pause();
      return rail.check(transfer, now);
    },
  });
  const rails = sandboxRails();
  return Object.fromEntries(
    Object.entries(rails).map(([name, rail]) => [name, slow(rail)]),
  ) as unknown as RailRegistry;
}

async function organizationOf(t: TestApp): Promise<string> {
  const key = await findApiKeyByHash(t.deps.store, hashApiKey(t.key));
  if (!key) throw new Error('test key not found');
  return key.organizationId;
}

describe.each(BACKENDS)('concurrent transfers on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  const send = async (url: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> => {
    const response = await api(t, 'POST', url, { body, ...(headers ? { headers } : {}) });
    return {
      status: response.statusCode,
      body: response.data,
      replayed: response.headers['idempotent-replayed'] === 'true',
    };
  };

  it(`accepts exactly ${AFFORDABLE_TRANSFERS} of ${CONTENDED_TRANSFERS} concurrent transfers a wallet can pay ${AFFORDABLE_TRANSFERS} of`, async () => {
    const source = await fundedWallet(t, kes(TRANSFER_AMOUNT_MINOR * BigInt(AFFORDABLE_TRANSFERS)));
    const destination = await fundedWallet(t, '0');
    const replies = await Promise.all(
      Array.from({ length: CONTENDED_TRANSFERS }, (_, i) =>
        send('/v1/transfers', contendedBody(i, source, destination)),
      ),
    );
    expectExactlyAffordableAccepted(replies, {
      source: await balanceOf(t, source),
      destination: await balanceOf(t, destination),
    });
    const listed = await api(t, 'GET', `/v1/transfers?wallet=${source}&limit=100`);
    expect(listed.data.data.filter((x: { direction: string }) => x.direction === 'outbound')).toHaveLength(
      AFFORDABLE_TRANSFERS,
    );
    // Batch-shaped: one commit carried several of them (a batch stamps all its transfers with one time).
    const commits = new Set(replies.filter((r) => r.status === 201).map((r) => r.body.created_at));
    expect(commits.size).toBeLessThan(AFFORDABLE_TRANSFERS);
    expect(await verifyLedger(t.deps.store)).toEqual([]);
  });

  it(`makes one transfer and one hold from one Idempotency-Key sent ${SAME_KEY_REQUESTS} times at once`, async () => {
    const wallet = await fundedWallet(t, '100.00');
    const body = {
      source: wallet,
      destination: mobileMoney(TIMEOUT_PHONE),
      amount: '7.00',
      currency: 'KES',
    };
    const headers = { 'idempotency-key': `same-key-${backend}-${randomBytes(4).toString('hex')}` };
    const replies = await Promise.all(
      Array.from({ length: SAME_KEY_REQUESTS }, () => send('/v1/transfers', body, headers)),
    );
    // One process: repeats in the first one's batch, or in a later batch, all receive its replay.
    const fresh = replies.filter((r) => r.status === 201 && !r.replayed);
    expect(fresh).toHaveLength(1);
    expect(tally(replies)).toEqual({ '201': SAME_KEY_REQUESTS });
    for (const r of replies) expect(r.body.id).toBe(fresh[0]?.body.id);

    expect(await balanceOf(t, wallet)).toMatchObject({ available: '93.00', pending: '7.00' });
    const transfers = await api(t, 'GET', `/v1/transfers?wallet=${wallet}`);
    expect(transfers.data.data.filter((x: { direction: string }) => x.direction === 'outbound')).toHaveLength(
      1,
    );
    const entries = await listJournalEntries(
      t.deps.store,
      await organizationOf(t),
      { walletId: wallet },
      100,
    );
    expect(entries.filter((e) => e.kind === 'hold').map((e) => e.transferId)).toEqual([fresh[0]?.body.id]);

    // After the storm, the key still replays the one transfer.
    const after = await send('/v1/transfers', body, headers);
    expect(after).toMatchObject({ status: 201, replayed: true, body: { id: fresh[0]?.body.id } });
    expect(await verifyLedger(t.deps.store)).toEqual([]);
  });

  it('replays a refusal to its concurrent repeats, and refuses another request under the same key', async () => {
    const wallet = await fundedWallet(t, '5.00');
    const tooMuch = {
      source: wallet,
      destination: mobileMoney(TIMEOUT_PHONE),
      amount: '10.00',
      currency: 'KES',
    };
    const refusedKey = { 'idempotency-key': `refused-${randomBytes(4).toString('hex')}` };
    const refused = await Promise.all(
      Array.from({ length: SAME_KEY_REQUESTS }, () => send('/v1/transfers', tooMuch, refusedKey)),
    );
    expect(tally(refused)).toEqual({ '422 insufficient_funds': SAME_KEY_REQUESTS });
    expect(refused.filter((r) => !r.replayed)).toHaveLength(1);

    // Two different requests under one key: the one processed first wins, its repeats replay it, and the
    // other request is told the key is busy (same batch) or was used for something else (later batch).
    const mixedKey = { 'idempotency-key': `mixed-${randomBytes(4).toString('hex')}` };
    const bodies = [
      { ...tooMuch, amount: '1.00' },
      { ...tooMuch, amount: '2.00' },
    ];
    const mixed = await Promise.all(
      Array.from({ length: SAME_KEY_REQUESTS }, (_, i) =>
        send('/v1/transfers', bodies[i % 2], mixedKey).then((reply) => ({
          ...reply,
          amount: bodies[i % 2]?.amount,
        })),
      ),
    );
    const winner = mixed.filter((r) => r.status === 201 && !r.replayed);
    expect(winner).toHaveLength(1);
    for (const r of mixed) {
      if (r.amount === winner[0]?.amount) {
        expect(r).toMatchObject({ status: 201, body: { id: winner[0]?.body.id } });
      } else {
        expect(['409 idempotency_key_in_flight', '422 idempotency_key_reused']).toContain(
          `${r.status} ${r.body.code}`,
        );
      }
    }
    expect(await balanceOf(t, wallet)).toMatchObject({ pending: winner[0]?.amount, current: '5.00' });
    expect(await verifyLedger(t.deps.store)).toEqual([]);
  });

  it('keeps every invariant through concurrent creates, cancels, sandbox settles and fails, and rail passes', async () => {
    const wallets: string[] = [];
    for (let i = 0; i < STORM_WALLETS; i++) wallets.push(await fundedWallet(t, '300.00'));
    const phones = [TIMEOUT_PHONE, SETTLE_PHONE, FAIL_PHONE];
    const create = (i: number) => {
      const source = wallets[i % STORM_WALLETS] as string;
      const internal = i % 3 === 2;
      return send('/v1/transfers', {
        source,
        destination: internal
          ? (wallets[(i + 1) % STORM_WALLETS] as string)
          : mobileMoney(phones[i % phones.length] as string),
        amount: kes(BigInt(25_00 + (i % 7) * 10_00)),
        currency: 'KES',
      });
    };
    // Transfers that exist before the storm, for the cancels, settles and fails to act on.
    const existing = (
      await Promise.all(Array.from({ length: STORM_EXISTING_TRANSFERS }, (_, i) => create(i)))
    )
      .filter((r) => r.status === 201)
      .map((r) => r.body.id as string);
    expect(existing.length).toBeGreaterThan(STORM_EXISTING_TRANSFERS / 2);

    const operations: Promise<Reply | number>[] = [];
    for (let i = 0; i < STORM_NEW_TRANSFERS; i++) operations.push(create(STORM_EXISTING_TRANSFERS + i));
    existing.forEach((id, i) => {
      const action = ['cancel', 'settle', 'fail', 'cancel', 'return'][i % 5];
      const url =
        action === 'cancel' ? `/v1/transfers/${id}/cancel` : `/v1/sandbox/transfers/${id}/${action}`;
      operations.push(send(url, action === 'fail' ? {} : undefined));
      // Some are driven twice at once: exactly one of the two may win.
      if (i % 4 === 0) operations.push(send(`/v1/sandbox/transfers/${id}/fail`, {}));
    });
    // Rail passes fail the test if they throw: a transfer moved while the worker was at the rail must be left alone.
    for (let i = 0; i < STORM_RAIL_PASSES; i++) operations.push(runRailWorkerOnce(t.deps, slowRails()));
    // Interleave the kinds of work instead of firing them grouped.
    const results = await Promise.all(shuffle(operations));

    const replies = results.filter((r): r is Reply => typeof r !== 'number');
    const allowed = new Set(['200', '201', '409 invalid_state_transition', '422 insufficient_funds']);
    for (const [label, count] of Object.entries(tally(replies))) {
      expect(
        allowed.has(label),
        `${count} × ${label} ${JSON.stringify(replies.filter((r) => `${r.status} ${r.body?.code}` === label).map((r) => r.body?.detail))}`,
      ).toBe(true);
    }
    expect(await verifyLedger(t.deps.store)).toEqual([]);
    // Later passes find only what is still theirs to do: a transfer someone else finished meanwhile must
    // not come back to the worker (it would try to settle a settled transfer and throw).
    await drainRails(t);
    expect(await verifyLedger(t.deps.store)).toEqual([]);

    // Each wallet's balances equal what its transfers' final states say they should be.
    for (const wallet of wallets) {
      const listed = await api(t, 'GET', `/v1/transfers?wallet=${wallet}&limit=100`);
      expect(listed.data.has_more).toBe(false);
      let current = 0n;
      let pending = 0n;
      for (const x of listed.data.data) {
        const amount = BigInt(x.amount.replace('.', ''));
        // A return reverses a settled transfer, so it nets to nothing on either side.
        if (x.source === wallet) {
          if (x.status === 'pending' || x.status === 'processing') pending += amount;
          if (x.status === 'settled') current -= amount;
        } else if (x.status === 'settled') {
          current += amount;
        }
      }
      expect(await balanceOf(t, wallet), wallet).toMatchObject({
        current: kes(current),
        pending: kes(pending),
        available: kes(current - pending),
      });
    }
  });
});

/** A deterministic shuffle (no hidden randomness in tests): interleaves the list by a fixed stride. */
function shuffle<T>(items: T[]): T[] {
  const STRIDE = 7;
  const out: T[] = [];
  for (let start = 0; start < STRIDE; start++) {
    for (let i = start; i < items.length; i += STRIDE) out.push(items[i] as T);
  }
  return out;
}

describe.skipIf(!TEST_DATABASE_URL)('two server processes sharing one PostgreSQL database', () => {
  const databaseUrl = TEST_DATABASE_URL as string;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const key = `sk_sandbox_${randomBytes(16).toString('hex')}`;
  const servers: Awaited<ReturnType<typeof startServerProcess>>[] = [];

  /** node-postgres passes `options` from the URL to the server, so each child puts our schema first. */
  function schemaUrl(): string {
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c search_path=${schema}`);
    return url.toString();
  }

  beforeAll(async () => {
    await createSchema(databaseUrl, schema);
    // Two replicas starting at once also exercise concurrent migration and seeding.
    const started = await Promise.allSettled(
      [0, 1].map(() =>
        startServerProcess({ DATABASE_URL: schemaUrl(), MKOBA_SANDBOX_API_KEY: key, MKOBA_ENV: 'sandbox' }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await dropSchema(databaseUrl, schema);
  });

  async function call(server: number, method: string, path: string, body?: unknown, headers = {}) {
    const target = servers[server % servers.length];
    if (!target) throw new Error('server not started');
    const response = await fetch(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? JSON.parse(text) : undefined,
      replayed: response.headers.get('idempotent-replayed') === 'true',
    } satisfies Reply;
  }

  async function newWallet(server: number, amount: string): Promise<string> {
    const owner = await call(server, 'POST', '/v1/customers', { type: 'individual', name: 'Two Servers' });
    expect(owner.status).toBe(201);
    const wallet = await call(server, 'POST', '/v1/wallets', { owner: owner.body.id, currency: 'KES' });
    expect(wallet.status).toBe(201);
    if (amount !== '0') {
      const funded = await call(server, 'POST', `/v1/sandbox/wallets/${wallet.body.id}/fund`, { amount });
      expect(funded.status).toBe(201);
    }
    return wallet.body.id;
  }

  /** A store of our own on the servers' schema. */
  async function withSchemaStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const store = await openPostgresStore({ connectionString: databaseUrl, schema });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }
  const verifySchema = () => withSchemaStore(verifyLedger);

  it('the two processes serve the same database', async () => {
    expect(servers).toHaveLength(2);
    expect(servers[0]?.url).not.toBe(servers[1]?.url);
    const wallet = await newWallet(0, '1.00');
    expect((await call(1, 'GET', `/v1/wallets/${wallet}/balance`)).body).toMatchObject({ available: '1.00' });
    // …and it is the schema this test made: the servers migrated and seeded it, not the default one.
    const seededKey = await withSchemaStore((store) => findApiKeyByHash(store, hashApiKey(key)));
    expect(seededKey?.revokedAt).toBeNull();
  });

  it(`accepts exactly ${AFFORDABLE_TRANSFERS} of ${CONTENDED_TRANSFERS} concurrent transfers split across both`, async () => {
    const source = await newWallet(0, kes(TRANSFER_AMOUNT_MINOR * BigInt(AFFORDABLE_TRANSFERS)));
    const destination = await newWallet(1, '0');
    const replies = await Promise.all(
      Array.from({ length: CONTENDED_TRANSFERS }, (_, i) =>
        call(i, 'POST', '/v1/transfers', contendedBody(i, source, destination)),
      ),
    );
    expectExactlyAffordableAccepted(replies, {
      source: (await call(0, 'GET', `/v1/wallets/${source}/balance`)).body,
      destination: (await call(1, 'GET', `/v1/wallets/${destination}/balance`)).body,
    });
    expect(await verifySchema()).toEqual([]);
  });

  it(`makes one transfer from one Idempotency-Key sent ${SAME_KEY_REQUESTS} times across both`, async () => {
    const wallet = await newWallet(0, '100.00');
    const body = { source: wallet, destination: mobileMoney(TIMEOUT_PHONE), amount: '7.00', currency: 'KES' };
    const headers = { 'idempotency-key': `two-servers-${randomBytes(4).toString('hex')}` };
    const replies = await Promise.all(
      Array.from({ length: SAME_KEY_REQUESTS }, (_, i) => call(i, 'POST', '/v1/transfers', body, headers)),
    );
    const fresh = replies.filter((r) => r.status === 201 && !r.replayed);
    expect(fresh).toHaveLength(1);
    for (const r of replies) {
      if (r === fresh[0]) continue;
      if (r.status === 201) expect(r).toMatchObject({ replayed: true, body: { id: fresh[0]?.body.id } });
      else expect(r).toMatchObject({ status: 409, body: { code: 'idempotency_key_in_flight' } });
    }
    expect((await call(1, 'GET', `/v1/wallets/${wallet}/balance`)).body).toMatchObject({
      available: '93.00',
      pending: '7.00',
    });
    expect(await verifySchema()).toEqual([]);
  });
});
