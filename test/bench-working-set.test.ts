/**
 * The transfer benchmark's working set (bench/workingSet.ts), seeded with SQL instead of the API: the wallets
 * it makes are wallets the API serves and moves money from, with their account details, and the funding
 * and the history it writes keep every ledger invariant (`ledger verify`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fundWorkingSet, seedHistory, seedWorkingSet, type WorkingSet } from '../bench/workingSet.ts';
import { verifyLedger } from '../src/modules/ledger/useCases/verify.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

const SOURCES = 20;
const FUNDS_MINOR = 100_000n;
const HISTORY = 200;

describe.each(BACKENDS)('bench working set on %s', (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.each([
    ['spread over customers', { business: false, customers: 10 }],
    ['one business customer', { business: true, customers: 1 }],
  ])('%s: the API serves and moves the seeded wallets, and the ledger verifies', async (_, shape) => {
    t = await startTestApp(backend);
    const set: WorkingSet = { sources: SOURCES, ...shape, tag: 'bench' };
    const wallets = await seedWorkingSet(t.db.store, t.organizationId, set);
    expect(wallets).toHaveLength(2 * SOURCES);
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallets[0]}/fund`, {
      body: { amount: '1000.00' },
    });
    expect(funded.statusCode).toBe(201);
    await fundWorkingSet(t.db.store, t.organizationId, set, FUNDS_MINOR);
    await seedHistory(t.db.store, t.organizationId, set, HISTORY);

    // Source 5 sent HISTORY / SOURCES transfers of 1.00 in the history; its destination received them.
    const source = await api(t, 'GET', `/v1/wallets/${wallets[5]}`);
    expect(source.statusCode).toBe(200);
    expect(source.data.balance.available).toBe('990.00');
    expect(source.data.account_details).not.toBeNull();
    const destination = await api(t, 'GET', `/v1/wallets/${wallets[SOURCES + 5]}`);
    expect(destination.data.balance.available).toBe('10.00');
    expect(destination.data.owner).toBe(source.data.owner);

    const transfer = await api(t, 'POST', '/v1/transfers', {
      headers: { 'idempotency-key': 'bench-working-set' },
      body: { source: wallets[5], destination: wallets[SOURCES + 5], amount: '1.00', currency: 'KES' },
    });
    expect(transfer.statusCode).toBe(201);
    expect(transfer.data.status).toBe('settled');
    expect(await verifyLedger(t.db.store)).toEqual([]);
  });
});
