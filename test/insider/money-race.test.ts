/**
 * One wallet's last money raced through every path that takes it at once: payouts, internal transfers,
 * conversions, loan repayments and payment batches (submitted, authorized and run by the batch worker) and
 * rail-worker passes, all concurrently. Every path takes its locks in the posting module's order (the
 * resource, the ledger accounts, the evidence chain; src/store/lockOrder.ts), so on PostgreSQL nothing
 * deadlocks: no request is a 503 or a 500, what was accepted fits what the wallet had, and the ledger
 * verifies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAmount } from '../../src/domain/money.ts';
import { runPaymentBatchPass } from '../../src/modules/paymentBatches/workers.ts';
import { LedgerWriter } from '../../src/modules/transfers/useCases/posting/writer.ts';
import { api, BACKENDS, createCustomer, startTestApp, type TestApp } from '../support/harness.ts';
import { balanceOf, drainRails, expectLedgerHealthy, mobileMoney } from '../support/ledger.ts';
import { newOrganization } from '../support/organizations.ts';

/** Rounds of the race per backend, and how many requests of each kind one round sends. */
const ROUNDS = 3;
const EACH_KIND = 4;
const AMOUNT = '100.00';

describe.each(BACKENDS)('racing one wallet’s last money through every path on %s', (backend) => {
  let t: TestApp;
  let writer: LedgerWriter;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    writer = new LedgerWriter(t.deps, 1);
  });
  afterAll(async () => {
    await t.close();
  });

  it('ends with no deadlock, no 5xx, nothing spent twice and the ledger verifying', async () => {
    const org = await newOrganization(t);
    const admin = await org.member(['admin']);
    const compliance = await org.member(['compliance']);
    const rates = await api(t, 'PUT', '/v1/conversion-rates', {
      key: compliance.key,
      body: { rates: [{ from: 'KES', to: 'USDC', rate: '0.0077' }] },
    });
    expect(rates.statusCode, rates.body).toBe(200);
    const product = await api(t, 'POST', '/v1/loan-products', {
      key: admin.key,
      body: {
        name: 'Race',
        currency: 'KES',
        interest_rate_bps: 1200,
        term_months: 12,
        amortisation: 'declining_balance',
        origination_fee_bps: 0,
        grace_period_months: 0,
        penalty_rate_bps: 0,
        min_principal: '100.00',
        max_principal: '50000.00',
      },
    });
    expect(product.statusCode, product.body).toBe(201);

    for (let round = 0; round < ROUNDS; round++) {
      const owner = await createCustomer(t, org.key);
      const open = async (currency: string) =>
        (await api(t, 'POST', '/v1/wallets', { key: org.key, body: { owner, currency } })).data.id as string;
      const wallet = await open('KES');
      const coins = await open('USDC');
      const payee = await open('KES');
      const loan = await api(t, 'POST', '/v1/loans', {
        key: org.key,
        body: { product: product.data.id, wallet, principal: '1000.00' },
      });
      expect(loan.statusCode, loan.body).toBe(201);
      const disbursed = await api(t, 'POST', `/v1/loans/${loan.data.id}/disburse`, { key: org.key });
      expect(disbursed.statusCode, disbursed.body).toBe(200);
      // The wallet holds the loan's 1,000.00: the race asks for far more than that.
      const quotes = await Promise.all(
        Array.from({ length: EACH_KIND }, async () => {
          const quote = await api(t, 'POST', '/v1/conversions/quote', {
            key: org.key,
            body: { from_wallet: wallet, to_wallet: coins, amount: AMOUNT },
          });
          expect(quote.statusCode, quote.body).toBe(201);
          return quote.data.id as string;
        }),
      );
      const requests = [
        ...Array.from({ length: EACH_KIND }, (_, i) =>
          api(t, 'POST', '/v1/transfers', {
            key: org.key,
            body: {
              source: wallet,
              destination: mobileMoney(`+2547110030${round}${i}`),
              amount: AMOUNT,
              currency: 'KES',
            },
          }),
        ),
        ...Array.from({ length: EACH_KIND }, () =>
          api(t, 'POST', '/v1/transfers', {
            key: org.key,
            body: { source: wallet, destination: payee, amount: AMOUNT, currency: 'KES' },
          }),
        ),
        ...quotes.map((quote) => api(t, 'POST', '/v1/conversions', { key: org.key, body: { quote } })),
        ...Array.from({ length: EACH_KIND }, () =>
          api(t, 'POST', `/v1/loans/${loan.data.id}/repayments`, { key: org.key, body: { amount: AMOUNT } }),
        ),
        ...Array.from({ length: EACH_KIND }, (_, i) =>
          api(t, 'POST', '/v1/payment-batches', {
            key: org.key,
            body: {
              source: wallet,
              currency: 'KES',
              reference: `race-${round}-${i}`,
              items: [
                { reference: 'a', destination: payee, amount: '50.00' },
                { reference: 'b', destination: mobileMoney('+254711004000'), amount: '50.00' },
              ],
            },
          }),
        ),
      ];
      const workers = [
        (async () => {
          for (let pass = 0; pass < 6; pass++) await runPaymentBatchPass(t.deps, writer);
        })(),
        drainRails(t, 3),
      ];
      const [responses] = await Promise.all([Promise.all(requests), Promise.all(workers)]);
      for (const response of responses) {
        expect(response.statusCode, response.body).toBeLessThan(500);
      }
      while ((await runPaymentBatchPass(t.deps, writer)) > 0) {}
      await drainRails(t);
      const balance = await balanceOf(t, wallet, org.key);
      expect(parseAmount(balance.available, 'KES')).toBeGreaterThanOrEqual(0n);
      expect(parseAmount(balance.current, 'KES')).toBeGreaterThanOrEqual(0n);
      // Something went through; the ledger's own invariants say nothing was taken twice.
      const accepted = responses.filter((r) => r.statusCode < 300).length;
      expect(accepted).toBeGreaterThan(0);
      await expectLedgerHealthy(t);
    }
  }, 240_000);
});
