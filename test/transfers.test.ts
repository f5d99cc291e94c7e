import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RAIL_POLL_WINDOW_OVER_REASON,
  RAIL_STATUS_POLL_WINDOW_MS,
} from '../src/modules/transfers/workers.ts';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';

describe.each(BACKENDS)('transfers on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(async () => {
    await expectLedgerHealthy(t);
    await t.close();
  });

  it('funds a wallet through a simulated collection', async () => {
    const wallet = await fundedWallet(t, '0');
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, {
      body: { amount: '1500.00' },
    });
    expect(funded.statusCode).toBe(201);
    expect(funded.data).toMatchObject({
      object: 'transfer',
      direction: 'inbound',
      amount: '1500.00',
      status: 'settled',
      ledger_state: 'posted',
      destination: { type: 'wallet', wallet },
    });
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '1500.00',
      pending: '0.00',
      current: '1500.00',
    });
  });

  it('form A: holds funds, hands off to the rail, and settles', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: {
        source: wallet,
        destination: mobileMoney('+254700000000'),
        amount: '250.00',
        currency: 'KES',
        metadata: { customer_ref: 'INV-1' },
      },
    });
    expect(created.statusCode).toBe(201);
    expect(created.data).toMatchObject({
      object: 'transfer',
      direction: 'outbound',
      source: wallet,
      destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000000' },
      amount: '250.00',
      currency: 'KES',
      rail: 'mobile_money',
      status: 'pending',
      ledger_state: 'pending',
      failure_code: null,
      metadata: { customer_ref: 'INV-1' },
      settled_at: null,
    });
    expect(created.data.id).toMatch(/^tr_/);
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '750.00',
      pending: '250.00',
      current: '1000.00',
    });

    await drainRails(t);
    const settled = await api(t, 'GET', `/v1/transfers/${created.data.id}`);
    expect(settled.data).toMatchObject({ status: 'settled', ledger_state: 'posted' });
    expect(settled.data.settled_at).not.toBeNull();
    expect(settled.data.processing_at).not.toBeNull();
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '750.00',
      pending: '0.00',
      current: '750.00',
    });
  });

  it('form B: wallet to wallet on the internal rail settles at once; numbers only when exact', async () => {
    const from = await fundedWallet(t, '100.00');
    const to = await fundedWallet(t, '0');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: from, destination: to, amount: 12.5, currency: 'KES', rail: 'internal' },
    });
    expect(created.statusCode).toBe(201);
    expect(created.data).toMatchObject({
      status: 'settled',
      ledger_state: 'posted',
      rail: 'internal',
      amount: '12.50',
    });
    expect(await balanceOf(t, from)).toMatchObject({ available: '87.50', current: '87.50' });
    expect(await balanceOf(t, to)).toMatchObject({ available: '12.50', current: '12.50' });

    const inexact = await api(t, 'POST', '/v1/transfers', {
      body: { source: from, destination: to, amount: 0.125, currency: 'KES', rail: 'internal' },
    });
    expect(inexact.statusCode).toBe(400);
    expect(inexact.data).toMatchObject({ code: 'validation_error', param: 'amount' });
  });

  it("reads a rail's clearing account once per process: a later payout sends no statement for it", async () => {
    const wallet = await fundedWallet(t, '100.00');
    const pay = (phone: string) =>
      api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney(phone), amount: '1.00', currency: 'KES' },
      });
    expect((await pay('+254700000101')).statusCode).toBe(201);
    const sent: string[] = [];
    const store = t.deps.store;
    const query = store.query.bind(store);
    store.query = (sql, params) => {
      sent.push(sql);
      return query(sql, params);
    };
    try {
      expect((await pay('+254700000102')).statusCode).toBe(201);
    } finally {
      store.query = query;
    }
    expect(sent.filter((sql) => sql.includes('rail_clearing') || /INTO ledger_accounts/.test(sql))).toEqual(
      [],
    );
    const accounts = await api(t, 'GET', '/v1/ledger/accounts?kind=rail_clearing&limit=100');
    const clearing = accounts.data.data.filter(
      (a: { rail: string; currency: string }) => a.rail === 'mobile_money' && a.currency === 'KES',
    );
    expect(clearing).toHaveLength(1);
  });

  it('a rail failure releases the hold with the failure code', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000001'), amount: '100.00', currency: 'KES' },
    });
    await drainRails(t);
    const failed = await api(t, 'GET', `/v1/transfers/${created.data.id}`);
    expect(failed.data).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_not_registered',
      ledger_state: 'voided',
    });
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '500.00',
      pending: '0.00',
      current: '500.00',
    });
  });

  it('a rail time-out stays processing with reason rail_timeout', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000003'), amount: '100.00', currency: 'KES' },
    });
    await drainRails(t);
    const stuck = await api(t, 'GET', `/v1/transfers/${created.data.id}`);
    expect(stuck.data).toMatchObject({
      status: 'processing',
      status_reason: 'rail_timeout',
      ledger_state: 'pending',
    });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '400.00', pending: '100.00' });
  });

  it('a payout still processing after the poll window is left to the statement, its hold kept', async () => {
    const wallet = await fundedWallet(t, '500.00');
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000003'), amount: '100.00', currency: 'KES' },
    });
    await drainRails(t);
    const realNow = t.deps.now;
    t.deps.now = () => new Date(Date.now() + RAIL_STATUS_POLL_WINDOW_MS + 60_000);
    try {
      await drainRails(t);
    } finally {
      t.deps.now = realNow;
    }
    const left = await api(t, 'GET', `/v1/transfers/${created.data.id}`);
    expect(left.data).toMatchObject({
      status: 'processing',
      status_reason: RAIL_POLL_WINDOW_OVER_REASON,
      ledger_state: 'pending',
    });
    const [row] = await t.db.store.query('SELECT next_rail_check_at FROM transfers WHERE id = $1', [
      created.data.id,
    ]);
    expect(row?.next_rail_check_at).toBeNull();
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '400.00', pending: '100.00' });
  });

  it('cancel works only before hand-off', async () => {
    const wallet = await fundedWallet(t, '300.00');
    const first = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '100.00', currency: 'KES' },
    });
    const canceled = await api(t, 'POST', `/v1/transfers/${first.data.id}/cancel`);
    expect(canceled.statusCode).toBe(200);
    expect(canceled.data).toMatchObject({ status: 'canceled', ledger_state: 'voided' });
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '300.00', pending: '0.00' });

    const second = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '100.00', currency: 'KES' },
    });
    await drainRails(t);
    const late = await api(t, 'POST', `/v1/transfers/${second.data.id}/cancel`);
    expect(late.statusCode).toBe(409);
    expect(late.data.code).toBe('invalid_state_transition');
  });

  it('sandbox settle, fail and return drive the status machine and the ledger', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const mk = async () =>
      (
        await api(t, 'POST', '/v1/transfers', {
          body: {
            source: wallet,
            destination: mobileMoney('+254700000003'),
            amount: '100.00',
            currency: 'KES',
          },
        })
      ).data.id as string;
    const a = await mk();
    const settled = await api(t, 'POST', `/v1/sandbox/transfers/${a}/settle`);
    expect(settled.data).toMatchObject({ status: 'settled', ledger_state: 'posted' });
    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${a}/return`);
    expect(returned.data).toMatchObject({ status: 'returned' });
    expect(returned.data.returned_at).not.toBeNull();
    const b = await mk();
    const failed = await api(t, 'POST', `/v1/sandbox/transfers/${b}/fail`, {
      body: { failure_code: 'rail_rejected' },
    });
    expect(failed.data).toMatchObject({
      status: 'failed',
      failure_code: 'rail_rejected',
      ledger_state: 'voided',
    });
    const c = await mk();
    const bodiless = await api(t, 'POST', `/v1/sandbox/transfers/${c}/fail`);
    expect(bodiless.data).toMatchObject({ status: 'failed', failure_code: 'sandbox_forced_failure' });
    const again = await api(t, 'POST', `/v1/sandbox/transfers/${b}/settle`);
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('invalid_state_transition');
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '1000.00',
      pending: '0.00',
      current: '1000.00',
    });
  });

  it('a sandbox return cannot take the destination wallet of an internal transfer below zero', async () => {
    const from = await fundedWallet(t, '100.00');
    const to = await fundedWallet(t, '0');
    const paid = await api(t, 'POST', '/v1/transfers', {
      body: { source: from, destination: to, amount: '100.00', currency: 'KES' },
    });
    const held = await api(t, 'POST', '/v1/transfers', {
      body: { source: to, destination: mobileMoney('+254700000003'), amount: '60.00', currency: 'KES' },
    });
    expect(held.statusCode).toBe(201);
    const refused = await api(t, 'POST', `/v1/sandbox/transfers/${paid.data.id}/return`);
    expect(refused.statusCode).toBe(422);
    expect(refused.data.code).toBe('insufficient_funds');
    expect((await api(t, 'GET', `/v1/transfers/${paid.data.id}`)).data.status).toBe('settled');
    expect(await balanceOf(t, to)).toMatchObject({ available: '40.00', pending: '60.00', current: '100.00' });

    await api(t, 'POST', `/v1/transfers/${held.data.id}/cancel`);
    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${paid.data.id}/return`);
    expect(returned.statusCode).toBe(200);
    expect(await balanceOf(t, to)).toMatchObject({ available: '0.00', current: '0.00' });
    expect(await balanceOf(t, from)).toMatchObject({ available: '100.00', current: '100.00' });
  });

  it('lack of funds is a 422 insufficient_funds and writes nothing', async () => {
    const wallet = await fundedWallet(t, '49.99');
    const before = (await api(t, 'GET', `/v1/transfers?wallet=${wallet}`)).data.data.length;
    const response = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '50.00', currency: 'KES' },
    });
    expect(response.statusCode).toBe(422);
    expect(response.data).toMatchObject({ code: 'insufficient_funds', param: 'amount' });
    expect((await api(t, 'GET', `/v1/transfers?wallet=${wallet}`)).data.data.length).toBe(before);
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '49.99', pending: '0.00' });
  });

  it('validates fields with the offending param', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const ugx = await fundedWallet(t, '0', 'UGX');
    const base = {
      source: wallet,
      destination: mobileMoney('+254711111111'),
      amount: '10.00',
      currency: 'KES',
    };
    const cases: [Record<string, unknown>, string, number?][] = [
      [{ currency: 'UGX' }, 'currency'],
      [{ amount: '-1.00' }, 'amount'],
      [{ amount: '0' }, 'amount'],
      [{ amount: '1.001' }, 'amount'],
      [{ amount: '999999999.00' }, 'amount'],
      [{ amount: 'ten' }, 'amount'],
      [{ destination: mobileMoney('0711111111') }, 'destination.phone'],
      [{ destination: mobileMoney('+256771234567', 'mpesa') }, 'destination.phone'],
      [{ destination: mobileMoney('+254711111111', 'pigeon') }, 'destination.network'],
      [{ destination: { type: 'mobile_money', phone: '+254711111111' } }, 'destination.network'],
      [{ destination: { type: 'teleport' } }, 'destination.type'],
      [{ destination: { type: 'till', till_number: '12345', extra: 'x' } }, 'destination.extra'],
      [{ destination: 'wallet_nope' }, 'destination'],
      [{ destination: ugx }, 'destination'],
      [{ destination: wallet }, 'destination'],
      [{ rail: 'bank' }, 'rail'],
      [{ source: 'wallet_01m80v1f31hmw57sgkdkcnyxra' }, 'source', 404],
      [{ metadata: { customer_ref: 'x'.repeat(501) } }, 'metadata.customer_ref'],
      [{ surprise: true }, 'surprise'],
    ];
    for (const [patch, param, status] of cases) {
      const response = await api(t, 'POST', '/v1/transfers', { body: { ...base, ...patch } });
      expect(response.statusCode, JSON.stringify(patch)).toBe(status ?? 400);
      expect(response.data.param, JSON.stringify(patch)).toBe(param);
    }
  });

  it("another organization's wallets and transfers are 404s", async () => {
    const wallet = await fundedWallet(t, '100.00');
    const other = await newOrganizationKey(t);
    const otherWallet = await fundedWallet(t, '100.00', 'KES', other);
    const pay = await api(t, 'POST', '/v1/transfers', {
      key: other,
      body: { source: otherWallet, destination: wallet, amount: '1.00', currency: 'KES' },
    });
    expect(pay.statusCode).toBe(404);
    expect(pay.data.param).toBe('destination');
    const mine = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254711111111'), amount: '1.00', currency: 'KES' },
    });
    expect((await api(t, 'GET', `/v1/transfers/${mine.data.id}`, { key: other })).statusCode).toBe(404);
  });

  it('lists with filters and replays idempotent creates', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const headers = { 'idempotency-key': `tr-${backend}` };
    const body = {
      source: wallet,
      destination: mobileMoney('+254711111111'),
      amount: '10.00',
      currency: 'KES',
    };
    const first = await api(t, 'POST', '/v1/transfers', { body, headers });
    const second = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.data.id).toBe(first.data.id);
    expect(await balanceOf(t, wallet)).toMatchObject({ available: '90.00' });
    const pending = await api(t, 'GET', `/v1/transfers?wallet=${wallet}&status=pending`);
    expect(pending.data.data.map((x: { id: string }) => x.id)).toEqual([first.data.id]);
  });
});
