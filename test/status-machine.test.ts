import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canTransition,
  TRANSFER_STATUSES,
  TRANSFER_TRANSITIONS,
  transition,
} from '../src/domain/transfers.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';

describe('the transfer status machine', () => {
  it('allows exactly the transitions of the design, and terminal states go nowhere', () => {
    for (const from of TRANSFER_STATUSES) {
      for (const to of TRANSFER_STATUSES) {
        const allowed = TRANSFER_TRANSITIONS[from].includes(to);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(allowed);
        if (allowed) expect(transition(from, to)).toBe(to);
        else expect(() => transition(from, to)).toThrow(/cannot become/);
      }
    }
    for (const terminal of ['failed', 'rejected', 'expired', 'canceled', 'returned'] as const) {
      expect(TRANSFER_TRANSITIONS[terminal]).toEqual([]);
    }
  });
});

describe.each(BACKENDS)('the database guards the status machine on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('holds the same transition table as the domain', async () => {
    const rows = await t.db.store.query<{ from_status: string; to_status: string }>(
      'SELECT from_status, to_status FROM transfer_status_transitions',
    );
    const fromDatabase = rows.map((r) => `${r.from_status}>${r.to_status}`).sort();
    const fromDomain = TRANSFER_STATUSES.flatMap((from) =>
      TRANSFER_TRANSITIONS[from].map((to) => `${from}>${to}`),
    ).sort();
    expect(fromDatabase).toEqual(fromDomain);
  });

  it('refuses an illegal status change written around the use cases', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '1.00', currency: 'KES' },
    });
    await api(t, 'POST', `/v1/sandbox/transfers/${created.data.id}/fail`);
    await expect(
      t.db.store.query("UPDATE transfers SET status = 'settled' WHERE id = $1", [created.data.id]),
    ).rejects.toThrow(/illegal transfer status change failed -> settled/);
  });

  it('a retry with the same Idempotency-Key replays even after the wallet was frozen', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const body = {
      source: wallet,
      destination: mobileMoney('+254711111111'),
      amount: '1.00',
      currency: 'KES',
    };
    const headers = { 'idempotency-key': `freeze-${backend}` };
    const first = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(first.statusCode).toBe(201);
    await t.db.store.query("UPDATE wallets SET status = 'frozen' WHERE id = $1", [wallet]);
    const retry = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.data.id).toBe(first.data.id);
    const reused = await api(t, 'POST', '/v1/transfers', { body: { ...body, amount: '2.00' }, headers });
    expect(reused.statusCode).toBe(422);
    expect(reused.data.code).toBe('idempotency_key_reused');
  });

  it('a frozen or closed wallet cannot send, and nothing is written', async () => {
    for (const status of ['frozen', 'closed']) {
      // A wallet closes only empty (the database refuses otherwise): the closed one has nothing to send,
      // and its refusal still names its status first.
      const funds = status === 'closed' ? '0.00' : '100.00';
      const wallet = await fundedWallet(t, status === 'closed' ? '0' : funds);
      // The store stands in for the operator's freeze and the integrator's close.
      await t.db.store.query('UPDATE wallets SET status = $2 WHERE id = $1', [wallet, status]);
      const response = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '1.00', currency: 'KES' },
      });
      expect(response.statusCode, status).toBe(409);
      expect(response.data).toMatchObject({ code: 'wallet_not_active', param: 'source' });
      const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`);
      expect(balance.data).toMatchObject({ available: funds, pending: '0.00' });
    }
  });
});

describe.each(BACKENDS)('sandbox routes in production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(() => t.close());

  it('do not exist', async () => {
    for (const url of [
      '/v1/sandbox/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra/fund',
      '/v1/sandbox/transfers/tr_01m80v1f31hmw57sgkdkcnyxra/settle',
      '/v1/sandbox/events',
    ]) {
      const response = await api(t, 'POST', url, { body: { amount: '1.00', type: 'transfer.settled' } });
      expect(response.statusCode, url).toBe(404);
      expect(response.data.code).toBe('route_not_found');
    }
  });
});
