/**
 * Tier limits through HTTP: a single transfer, the UTC day's and month's sums per customer and currency,
 * across the customer's wallets; a 422 `limit_exceeded` naming the limit and what remains; a transfer that
 * moved no money gives its amount back; a verified customer's higher tier; two transfers racing for the last
 * of a daily limit from two wallets in two writer lanes: exactly one passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from './support/harness.ts';
import { drainRails, expectLedgerHealthy } from './support/ledger.ts';

const LANES = 4;

describe.each(BACKENDS)('tier limits on %s', (backend) => {
  let t: TestApp;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { ledgerWriterLanes: LANES });
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  async function walletOf(customer: string, fund: string) {
    const wallet = (await api(t, 'POST', '/v1/wallets', { body: { owner: customer, currency: 'KES' } })).data
      .id;
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { body: { amount: fund } });
    expect(funded.statusCode, funded.body).toBe(201);
    return wallet as string;
  }
  const pay = (source: string, amount: string, phone = '+254711999000') =>
    api(t, 'POST', '/v1/transfers', {
      body: {
        source,
        destination: { type: 'mobile_money', network: 'mpesa', phone },
        amount,
        currency: 'KES',
      },
    });

  it('tier 0: a single transfer of at most 70,000.00 KES, and 150,000.00 a day across the customer’s wallets', async () => {
    const customer = await createCustomer(t);
    const first = await walletOf(customer, '200000.00');
    const second = await walletOf(customer, '200000.00');
    const tooBig = await pay(first, '70001.00');
    expect(tooBig.statusCode).toBe(422);
    expect(tooBig.data).toMatchObject({
      code: 'limit_exceeded',
      param: 'amount',
      limit: 'single',
      remaining: '70000.00',
    });
    expect(tooBig.data.detail).toContain('Tier 0');
    expect((await pay(first, '70000.00')).statusCode).toBe(201);
    expect((await pay(second, '70000.00')).statusCode).toBe(201);
    const overDay = await pay(second, '10001.00');
    expect(overDay.data).toMatchObject({ code: 'limit_exceeded', limit: 'daily_sum', remaining: '10000.00' });
    expect((await pay(first, '10000.00')).statusCode).toBe(201);
    const spent = await pay(first, '1.00');
    expect(spent.data).toMatchObject({ limit: 'daily_sum', remaining: '0.00' });
  });

  it('a transfer that fails gives its amount back to the day', async () => {
    const customer = await createCustomer(t);
    const wallet = await walletOf(customer, '300000.00');
    expect((await pay(wallet, '70000.00', '+254700000001')).statusCode).toBe(201);
    expect((await pay(wallet, '70000.00')).statusCode).toBe(201);
    expect((await pay(wallet, '70000.00')).data.limit).toBe('daily_sum');
    await drainRails(t);
    expect((await pay(wallet, '70000.00')).statusCode).toBe(201);
  });

  it('a verified individual is tier 1 with higher limits', async () => {
    const customer = await createCustomer(t);
    const verified = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
      body: {
        type: 'individual',
        legal_name: 'Neema Mwangi',
        date_of_birth: '1991-03-09',
        national_id: { type: 'national_id', number: '27001234' },
        phone: '+254711555666',
        address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
      },
    });
    expect(verified.data.status).toBe('verified');
    const wallet = await walletOf(customer, '600000.00');
    const other = await walletOf(await createCustomer(t), '1.00');
    const internal = (amount: string) =>
      api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: other, amount, currency: 'KES' },
      });
    expect((await internal('250000.00')).statusCode).toBe(201);
    expect((await internal('250000.01')).data).toMatchObject({ limit: 'single', remaining: '250000.00' });
  });

  it('the month counts every UTC day of it', async () => {
    const customer = await createCustomer(t);
    const wallet = await walletOf(customer, '400000.00');
    const day = (d: number) => () => new Date(Date.UTC(2031, 0, d, 12));
    try {
      for (const d of [1, 2]) {
        t.deps.now = day(d);
        expect((await pay(wallet, '70000.00')).statusCode).toBe(201);
        expect((await pay(wallet, '70000.00')).statusCode).toBe(201);
        expect((await pay(wallet, '10000.00')).statusCode).toBe(201);
      }
      t.deps.now = day(3);
      expect((await pay(wallet, '1.00')).data).toMatchObject({ limit: 'monthly_sum', remaining: '0.00' });
      t.deps.now = () => new Date(Date.UTC(2031, 1, 1, 12));
      expect((await pay(wallet, '70000.00')).statusCode).toBe(201);
    } finally {
      t.deps.now = realNow;
    }
  });

  it('two transfers racing from two wallets for the last of a daily limit: exactly one passes', async () => {
    const customer = await createCustomer(t);
    const first = await walletOf(customer, '200000.00');
    const second = await walletOf(customer, '200000.00');
    expect((await pay(first, '70000.00')).statusCode).toBe(201);
    const [a, b] = await Promise.all([pay(first, '50000.00'), pay(second, '50000.00')]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([201, 422]);
    expect([a, b].find((r) => r.statusCode === 422)?.data).toMatchObject({
      limit: 'daily_sum',
      remaining: '30000.00',
    });
    await expectLedgerHealthy(t);
  });
});
