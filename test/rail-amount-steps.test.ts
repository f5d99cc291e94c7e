/**
 * What a rail will refuse is refused when asked: M-Pesa carries whole shillings, so a KES amount with cents
 * to an M-Pesa number is a 422 `amount_not_supported` naming the rule, on a transfer, a quote, a payment
 * batch's item and a collection, with nothing held or written; the rule is M-Pesa's, not every network's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAIL_AMOUNT_STEPS } from '../src/domain/transfers.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, fundedWallet, mobileMoney } from './support/ledger.ts';

describe('rails declare the steps they carry', () => {
  it('M-Pesa KES moves in whole shillings; no other rail declares a step', () => {
    expect(RAIL_AMOUNT_STEPS).toEqual([
      {
        rail: 'mobile_money',
        network: 'mpesa',
        currency: 'KES',
        stepMinor: 100n,
        rule: 'M-Pesa carries whole shillings',
      },
    ]);
  });
});

describe.each(BACKENDS)('amounts a rail does not carry, refused at creation, on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
  });
  afterAll(async () => {
    await t.close();
  });

  const expectRefusedCents = (response: { statusCode: number; data: Record<string, unknown> }) => {
    expect(response.statusCode).toBe(422);
    expect(response.data).toMatchObject({
      code: 'amount_not_supported',
      param: 'amount',
      errors: [{ param: 'amount', code: 'amount_not_supported' }],
    });
    expect(response.data.detail).toContain('M-Pesa carries whole shillings');
  };

  it('a KES transfer with cents to M-Pesa is a 422 that holds nothing and writes no transfer', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const transfersOf = async () => (await api(t, 'GET', `/v1/transfers?wallet=${wallet}`)).data.data;
    const funding = await transfersOf();
    const body = {
      source: wallet,
      destination: mobileMoney('+254700000000'),
      amount: '250.50',
      currency: 'KES',
    };
    const refused = await api(t, 'POST', '/v1/transfers', { body });
    expectRefusedCents(refused);
    expect(refused.data.detail).toBe(
      'M-Pesa carries whole shillings (multiples of 1.00 KES): 250.50 KES cannot be sent; 250.00 or 251.00 can.',
    );
    const keyed = await api(t, 'POST', '/v1/transfers', {
      body,
      headers: { 'idempotency-key': `cents-${backend}` },
    });
    expectRefusedCents(keyed);
    expect(await transfersOf()).toEqual(funding);
    expect(await balanceOf(t, wallet)).toMatchObject({
      available: '1000.00',
      pending: '0.00',
      current: '1000.00',
    });
    const whole = await api(t, 'POST', '/v1/transfers', { body: { ...body, amount: '250.00' } });
    expect(whole.statusCode, whole.body).toBe(201);
    expect((await balanceOf(t, wallet)).available).toBe('750.00');
  });

  it('the rule is M-Pesa’s: the same amount to another network, or between wallets, goes', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const payee = await fundedWallet(t, '0');
    const airtel = await api(t, 'POST', '/v1/transfers', {
      body: {
        source: wallet,
        destination: mobileMoney('+254730000000', 'airtel'),
        amount: '250.50',
        currency: 'KES',
      },
    });
    expect(airtel.statusCode, airtel.body).toBe(201);
    const internal = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: payee, amount: '0.50', currency: 'KES' },
    });
    expect(internal.statusCode, internal.body).toBe(201);
  });

  it('a quote, a payment batch item and a collection are refused the same way', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const collections = async () => (await api(t, 'GET', '/v1/collections')).data.data;
    const collectedBefore = await collections();
    expectRefusedCents(
      await api(t, 'POST', '/v1/transfers/quote', {
        body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '99.99', currency: 'KES' },
      }),
    );

    const batch = await api(t, 'POST', '/v1/payment-batches', {
      body: {
        source: wallet,
        currency: 'KES',
        reference: `cents-${backend}`,
        items: [
          { reference: 'a', destination: mobileMoney('+254711000001'), amount: '10.00' },
          { reference: 'b', destination: mobileMoney('+254711000002'), amount: '10.25' },
        ],
      },
    });
    expect(batch.statusCode).toBe(422);
    expect(batch.data.code).toBe('payment_batch_invalid');
    expect(batch.data.errors).toEqual([
      expect.objectContaining({ row: 2, param: 'items.1.amount', code: 'amount_not_supported' }),
    ]);
    expect(batch.data.errors[0].message).toContain('M-Pesa carries whole shillings');
    expect((await balanceOf(t, wallet)).available).toBe('1000.00');

    const collection = await api(t, 'POST', '/v1/collections', {
      body: {
        wallet,
        amount: '25.50',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      },
    });
    expectRefusedCents(collection);
    expect(await collections()).toEqual(collectedBefore);
  });
});
