/**
 * An insider against rates, limits and products (issue 21, points 5, 6 and 8), replayed through HTTP on
 * every backend: a compliance member cannot set a rate that creates money (a change outside the band or a
 * pair's first rate outside the sandbox needs a second member's approval; a quote taken before the rate
 * moved is refused once out of band; every change is a version with its setter); an unverified customer
 * cannot send stablecoins past the USD tier limits; an organization that has only `mobile_money` cannot
 * use stablecoins or digital banking. Plus the pure decisions: the band and the USD equivalence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_ORGANIZATION_NAME } from '../../src/app/seed.ts';
import {
  amountWithinBand,
  CONVERSION_RATE_BAND_BPS_DEFAULT,
  decideRateChange,
  parseConversionRate,
  rateChangesRequiringApproval,
  roundTripGain,
} from '../../src/domain/conversions.ts';
import { LIMIT_PEGS, limitBasisOf } from '../../src/domain/decisions/limits.ts';
import { enabledProducts, productOfMovement } from '../../src/domain/organizationProfile.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  createCustomer,
  startTestApp,
  type TestApp,
} from '../support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from '../support/ledger.ts';
import { memberKeyIn, newOrganization } from '../support/organizations.ts';

const rate = (text: string) => parseConversionRate(text, 'rate');
const BAND = CONVERSION_RATE_BAND_BPS_DEFAULT;
const ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const KES_USDC = { from: 'KES', to: 'USDC' } as const;

describe('the rate band and the USD equivalence, pure', () => {
  it('bounds a rate change by the band of the rate in force, exactly', () => {
    // 5 % of 0.0077 is 0.000385: 0.008085 is on the edge, one more digit is past it.
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('0.008085'), BAND)).toMatchObject({
      reason: 'within_band',
      needsApproval: false,
      previous: '0.0077',
      next: '0.008085',
    });
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('0.008085000001'), BAND)).toMatchObject({
      reason: 'outside_band',
      needsApproval: true,
    });
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('0.007315'), BAND).reason).toBe('within_band');
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('0.007314'), BAND).reason).toBe('outside_band');
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('1000000'), BAND).reason).toBe('outside_band');
    expect(decideRateChange(KES_USDC, rate('0.0077'), rate('0.00770'), BAND).reason).toBe('unchanged');
    expect(decideRateChange(KES_USDC, undefined, rate('0.0077'), BAND)).toMatchObject({
      reason: 'no_previous_rate',
      needsApproval: true,
      previous: null,
    });
  });

  it('lets only the sandbox set a pair’s very first rate without approval', () => {
    const first = decideRateChange(KES_USDC, undefined, rate('0.0077'), BAND);
    const outside = decideRateChange(KES_USDC, rate('0.0077'), rate('1'), BAND);
    const never = () => false;
    const before = () => true;
    expect(rateChangesRequiringApproval([first], { sandbox: true, hadRate: never })).toEqual([]);
    expect(rateChangesRequiringApproval([first], { sandbox: true, hadRate: before })).toEqual([first]);
    expect(rateChangesRequiringApproval([first], { sandbox: false, hadRate: never })).toEqual([first]);
    expect(rateChangesRequiringApproval([outside], { sandbox: true, hadRate: never })).toEqual([outside]);
  });

  it('refuses a table whose round trip gains', () => {
    const table = (there: string, back: string) => [
      { from: 'KES' as const, to: 'USDC' as const, rate: rate(there) },
      { from: 'USDC' as const, to: 'KES' as const, rate: rate(back) },
    ];
    expect(roundTripGain(table('0.0077', '128.5'))).toBeUndefined();
    expect(roundTripGain(table('0.008', '125'))).toBeUndefined(); // exactly 1: breaks even
    expect(roundTripGain(table('0.0079', '128.5'))).toEqual({ index: 0, from: 'KES', to: 'USDC' });
    expect(roundTripGain([{ from: 'KES', to: 'USDC', rate: rate('1000000') }])).toBeUndefined();
  });

  it('holds an amount to the band of a reference amount', () => {
    expect(amountWithinBand(105n, 100n, BAND)).toBe(true);
    expect(amountWithinBand(106n, 100n, BAND)).toBe(false);
    expect(amountWithinBand(95n, 100n, BAND)).toBe(true);
    expect(amountWithinBand(94n, 100n, BAND)).toBe(false);
    expect(amountWithinBand(1n, 0n, BAND)).toBe(false);
  });

  it('counts stablecoins at their USD equivalent, rounded up, and no currency as unlimited', () => {
    expect(LIMIT_PEGS).toEqual({ USDC: 'USD', USDT: 'USD' });
    // 900 USDC is 900.00 USD; 1 USD minor unit is 10^4 USDC minor units.
    expect(limitBasisOf('USDC', 900_000_000n)).toEqual({ currency: 'USD', amountMinor: 90_000n });
    expect(limitBasisOf('USDT', 10_000n)).toEqual({ currency: 'USD', amountMinor: 1n });
    // Dust counts as a whole cent, so splitting never counts less.
    expect(limitBasisOf('USDC', 1n)).toEqual({ currency: 'USD', amountMinor: 1n });
    expect(limitBasisOf('USDC', 10_001n)).toEqual({ currency: 'USD', amountMinor: 2n });
    expect(limitBasisOf('KES', 123n)).toEqual({ currency: 'KES', amountMinor: 123n });
    expect(limitBasisOf('NGN', 100n)).toBeUndefined();
  });

  it('maps movements to products, and names the defaults', () => {
    expect(productOfMovement({ rail: 'digital_asset', currency: 'USDC' })).toBe('stablecoins');
    expect(productOfMovement({ rail: 'internal', currency: 'USDT' })).toBe('stablecoins');
    expect(productOfMovement({ rail: 'bank', currency: 'KES' })).toBe('digital_banking');
    expect(productOfMovement({ rail: 'mobile_money', currency: 'KES' })).toBe('mobile_money');
    expect(productOfMovement({ rail: 'internal', currency: 'KES' })).toBeUndefined();
    expect(enabledProducts(['mobile_money'], true)).toEqual(['mobile_money']);
    expect(enabledProducts(undefined, true)).toEqual(['mobile_money', 'digital_banking', 'stablecoins']);
    expect(enabledProducts(undefined, false)).toEqual(['mobile_money']);
  });
});

describe.each(BACKENDS)('an insider against rates, limits and products on %s', (backend) => {
  let t: TestApp;
  let operator: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
  });
  afterAll(() => t.close());

  const ratesNow = async () => (await api(t, 'GET', '/v1/conversion-rates')).data.data as any[];
  const putRates = (rates: { from: string; to: string; rate: string }[]) =>
    api(t, 'PUT', '/v1/conversion-rates', { key: operator, body: { rates } });
  /** The table in force with one pair's rate changed. */
  const withRate = async (from: string, to: string, value: string) =>
    (await ratesNow()).map((r) => ({
      from: r.from,
      to: r.to,
      rate: r.from === from && r.to === to ? value : r.rate,
    }));
  const customerWallets = async (amount: string) => {
    const owner = await createCustomer(t);
    const fiat = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES' } });
    const coin = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'USDC' } });
    await api(t, 'POST', `/v1/sandbox/wallets/${fiat.data.id}/fund`, { body: { amount } });
    return { fiat: fiat.data.id as string, coin: coin.data.id as string };
  };
  const quote = (from: string, to: string, amount: string) =>
    api(t, 'POST', '/v1/conversions/quote', { body: { from_wallet: from, to_wallet: to, amount } });
  const execute = (id: string) => api(t, 'POST', '/v1/conversions', { body: { quote: id } });

  it('5: a compliance member cannot set KES→USDC to 1,000,000; 1.00 KES stays 0.0077 USDC', async () => {
    const before = await ratesNow();
    // With USDC→KES at 128.5 beside it, KES→USDC→KES would multiply money: refused as a table.
    const roundTrip = await putRates(await withRate('KES', 'USDC', '1000000'));
    expect(roundTrip.statusCode, roundTrip.body).toBe(400);
    expect(roundTrip.data.errors[0]).toMatchObject({ code: 'round_trip_gain' });
    // Alone (its reverse removed), the move is past the band: it needs a second member.
    const absurd = await putRates(
      (await withRate('KES', 'USDC', '1000000')).filter((r) => !(r.from === 'USDC' && r.to === 'KES')),
    );
    expect(absurd.statusCode, absurd.body).toBe(202);
    expect(absurd.data).toMatchObject({
      object: 'change',
      kind: 'conversion_rate',
      status: 'pending',
      rule: 'conversion_rate_band',
    });
    expect(await ratesNow()).toEqual(before);
    // Its proposer cannot approve it; a second member rejects it, and nothing changes.
    const own = await api(t, 'POST', `/v1/approvals/${absurd.data.approval}/approve`, {
      key: operator,
      body: {},
    });
    expect(own.statusCode, own.body).toBe(403);
    expect(own.data.code).toBe('self_approval_forbidden');
    const second = await memberKeyIn(t, SANDBOX_ORGANIZATION_NAME, ['compliance']);
    const rejected = await api(t, 'POST', `/v1/approvals/${absurd.data.approval}/reject`, {
      key: second.key,
      body: { comment: 'a thousandfold rate is an error' },
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect((await api(t, 'GET', `/v1/changes/${absurd.data.id}`, { key: operator })).data.status).toBe(
      'rejected',
    );
    expect(await ratesNow()).toEqual(before);

    const { fiat, coin } = await customerWallets('100.00');
    const q = await quote(fiat, coin, '1.00');
    expect(q.statusCode, q.body).toBe(201);
    expect(q.data).toMatchObject({ to_amount: '0.007700', rate: '0.0077' });
    const kesUsdc = before.find((r) => r.from === 'KES' && r.to === 'USDC');
    expect(kesUsdc.version).toMatch(/^crv_/);
    expect(q.data.rate_version).toBe(kesUsdc.version);
  });

  it('5: a change within the band applies as a new version with its setter; a pair re-added needs approval', async () => {
    // Up within the band, but then KES→USDC→KES would return more than it sent: refused as a whole.
    const gain = await putRates(await withRate('KES', 'USDC', '0.0079'));
    expect(gain.statusCode, gain.body).toBe(400);
    expect(gain.data.errors[0]).toMatchObject({ code: 'round_trip_gain' });
    const moved = await putRates(await withRate('KES', 'USDC', '0.0076'));
    expect(moved.statusCode, moved.body).toBe(200);
    const entry = moved.data.data.find((r: any) => r.from === 'KES' && r.to === 'USDC');
    expect(entry.rate).toBe('0.0076');
    const [version] = await t.db.store.query<Record<string, unknown>>(
      'SELECT previous_rate, rate, basis, set_by FROM conversion_rate_versions WHERE id = $1',
      [entry.version],
    );
    expect(version).toMatchObject({ previous_rate: '0.0077', rate: '0.0076', basis: 'within_band' });
    expect(String(version?.set_by)).toMatch(/^mem_/);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=conversion.rates.update', { key: operator });
    expect(evidence.data.data[0].data.versions).toEqual([
      expect.objectContaining({ id: entry.version, previous_rate: '0.0077', rate: '0.0076' }),
    ]);
    expect(evidence.data.data[0].actor).toMatch(/^key_/);

    // Removing a pair needs no approval, but putting it back at any rate does: it had a rate before.
    const without = (await ratesNow()).filter((r) => !(r.from === 'USDT' && r.to === 'KES'));
    expect((await putRates(without.map(({ from, to, rate: r }) => ({ from, to, rate: r })))).statusCode).toBe(
      200,
    );
    const back = await putRates([
      ...without.map(({ from, to, rate: r }) => ({ from, to, rate: r })),
      { from: 'USDT', to: 'KES', rate: '128.5' },
    ]);
    expect(back.statusCode, back.body).toBe(202);
    expect(back.data).toMatchObject({ kind: 'conversion_rate', status: 'pending' });
    // Approved by a second member, it is applied by that vote as a version with the basis `approved`.
    const approver = await memberKeyIn(t, SANDBOX_ORGANIZATION_NAME, ['admin']);
    const approved = await api(t, 'POST', `/v1/approvals/${back.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const readded = (await ratesNow()).find((r) => r.from === 'USDT' && r.to === 'KES');
    expect(readded).toMatchObject({ rate: '128.5' });
    const [approvedVersion] = await t.db.store.query<Record<string, unknown>>(
      'SELECT basis FROM conversion_rate_versions WHERE id = $1',
      [readded.version],
    );
    expect(approvedVersion).toMatchObject({ basis: 'approved' });
    // A pair that never had a rate is the sandbox's to set (seed and tests).
    const first = await putRates([
      ...without.map(({ from, to, rate: r }) => ({ from, to, rate: r })),
      { from: 'GHS', to: 'USDC', rate: '0.065' },
    ]);
    expect(first.statusCode, first.body).toBe(200);
  });

  it('5: a quote taken before the rate moved past the band is refused rate_out_of_band; one within it converts', async () => {
    const { fiat, coin } = await customerWallets('10000.00');
    const early = await quote(fiat, coin, '1000.00');
    expect(early.data).toMatchObject({ to_amount: '7.600000' });
    const kept = await quote(fiat, coin, '1000.00');
    // Two steps each inside the band walk the rate more than the band away from the early quotes.
    expect((await putRates(await withRate('KES', 'USDC', '0.0074'))).statusCode).toBe(200);
    const within = await execute(kept.data.id);
    expect(within.statusCode, within.body).toBe(201);
    expect(within.data.rate_version).toBe(kept.data.rate_version);
    expect((await putRates(await withRate('KES', 'USDC', '0.0072'))).statusCode).toBe(200);
    const refused = await execute(early.data.id);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.data).toMatchObject({ code: 'rate_out_of_band', param: 'quote' });
    expect((await balanceOf(t, coin)).available).toBe('7.600000');
    expect((await balanceOf(t, fiat)).available).toBe('9000.00');
  });

  it('6: an unverified customer cannot send 4 × 900 USDC to crypto addresses, as 900.00 USD is refused', async () => {
    const usd = await fundedWallet(t, '5000.00', 'USD');
    const payee = await fundedWallet(t, '0', 'USD');
    const usdRefused = await api(t, 'POST', '/v1/transfers', {
      body: { source: usd, destination: payee, amount: '900.00', currency: 'USD' },
    });
    expect(usdRefused.statusCode, usdRefused.body).toBe(422);
    expect(usdRefused.data).toMatchObject({ code: 'limit_exceeded', limit: 'single' });
    const usdc = await fundedWallet(t, '5000.000000', 'USDC');
    const send = (amount: string) =>
      api(t, 'POST', '/v1/transfers', {
        body: {
          source: usdc,
          destination: { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: ADDRESS },
          amount,
          currency: 'USDC',
        },
      });
    for (let i = 0; i < 4; i++) {
      const refused = await send('900.000000');
      expect(refused.statusCode, refused.body).toBe(422);
      expect(refused.data).toMatchObject({
        code: 'limit_exceeded',
        param: 'amount',
        limit: 'single',
        remaining: '500.00',
      });
    }
    // Tier 0's 1,000.00 USD a day, counted in USD: 2 × 450 USDC pass, a third does not.
    expect((await send('450.000000')).statusCode).toBe(201);
    expect((await send('450.000000')).statusCode).toBe(201);
    const daily = await send('450.000000');
    expect(daily.data).toMatchObject({ code: 'limit_exceeded', limit: 'daily_sum', remaining: '100.00' });
    // Dust is counted up to the cent: 100 USD remain, so 100.000001 USDC does not fit.
    expect((await send('100.000001')).data).toMatchObject({ code: 'limit_exceeded', limit: 'daily_sum' });
    expect((await balanceOf(t, usdc)).available).toBe('4100.000000');
  });

  it('6: a currency without tier limits is refused limit_not_configured, never unlimited', async () => {
    const ngn = await fundedWallet(t, '1000.00', 'NGN');
    const other = await fundedWallet(t, '0', 'NGN');
    const refused = await api(t, 'POST', '/v1/transfers', {
      body: { source: ngn, destination: other, amount: '10.00', currency: 'NGN' },
    });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.data).toMatchObject({ code: 'limit_not_configured', param: 'amount' });
    await expectLedgerHealthy(t);
  });
});

describe.each(BACKENDS)('products switched on per organization on %s', (backend) => {
  let t: TestApp;
  let key: string;
  let usdc: string;
  let kes: string;

  beforeAll(async () => {
    t = await startTestApp(backend);
    key = (await newOrganization(t)).key;
    // Made while the organization had named no products (in the sandbox, every product is then open to it).
    usdc = await fundedWallet(t, '100.000000', 'USDC', key);
    kes = await fundedWallet(t, '1000.00', 'KES', key);
    const set = await api(t, 'PATCH', '/v1/organization', { key, body: { products: ['mobile_money'] } });
    expect(set.statusCode, set.body).toBe(200);
  });
  afterAll(() => t.close());

  const expectNotEnabled = (response: { statusCode: number; body: string; data: any }, product: string) => {
    expect(response.statusCode, response.body).toBe(403);
    expect(response.data).toMatchObject({ code: 'product_not_enabled', product });
    expect(response.data.detail).toContain(product);
  };

  it('8: an organization with only mobile_money cannot move USDC, convert, borrow, save or issue accounts', async () => {
    const owner = await createCustomer(t, key);
    expectNotEnabled(
      await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'USDC' } }),
      'stablecoins',
    );
    expectNotEnabled(
      await api(t, 'POST', '/v1/transfers', {
        key,
        body: {
          source: usdc,
          destination: { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: ADDRESS },
          amount: '10.000000',
          currency: 'USDC',
        },
      }),
      'stablecoins',
    );
    expectNotEnabled(
      await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, { key, body: { network: 'ethereum' } }),
      'stablecoins',
    );
    expectNotEnabled(
      await api(t, 'POST', '/v1/conversions/quote', {
        key,
        body: { from_wallet: kes, to_wallet: usdc, amount: '1.00' },
      }),
      'stablecoins',
    );
    expectNotEnabled(await api(t, 'GET', '/v1/conversion-rates', { key }), 'stablecoins');
    expectNotEnabled(await api(t, 'GET', '/v1/loans', { key }), 'digital_banking');
    expectNotEnabled(await api(t, 'GET', '/v1/savings-products', { key }), 'digital_banking');
    expectNotEnabled(await api(t, 'POST', `/v1/wallets/${kes}/account-details`, { key }), 'digital_banking');
    // Its own product still works.
    const payout = await api(t, 'POST', '/v1/transfers', {
      key,
      body: {
        source: kes,
        destination: { type: 'mobile_money', network: 'mpesa', phone: '+254700000001' },
        amount: '10.00',
        currency: 'KES',
      },
    });
    expect(payout.statusCode, payout.body).toBe(201);
    // Switched on, the same requests pass the product check.
    await api(t, 'PATCH', '/v1/organization', { key, body: { products: ['mobile_money', 'stablecoins'] } });
    const wallet = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'USDC' } });
    expect(wallet.statusCode, wallet.body).toBe(201);
  });
});
