/**
 * Stablecoin routes through HTTP: address validation per network family (checksums, the wrong family),
 * route limits on withdrawals, deposit addresses on approved routes, deposits on the simulated chain
 * credited only after their confirmations and once, a reorganisation before finality that never credits,
 * the Travel Rule on deposits, and mint/redeem conversions at a quoted rate (expiry, replays, a race on one
 * wallet); the ledger and every evidence chain intact after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvidence } from '../src/app/evidence.ts';
import { checkAddress } from '../src/domain/digitalAssets.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  createCustomer,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

/** EIP-55's own test vector, and the same address with one letter's case flipped. */
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const BAD_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';
const TRON = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const TRON_BAD_CHECKSUM = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv9';
const SOLANA = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';

const crypto = (address: string, network = 'ethereum', asset = 'USDC') => ({
  type: 'crypto_address',
  asset,
  network,
  address,
});
const quietLog = () => {};

describe('address checks, pure', () => {
  it('takes good addresses of each family and tells what is wrong with bad ones', () => {
    expect(checkAddress(CHECKSUMMED, 'ethereum')).toEqual({ ok: true });
    expect(checkAddress(CHECKSUMMED.toLowerCase(), 'base')).toEqual({ ok: true });
    expect(checkAddress(`0x${CHECKSUMMED.slice(2).toUpperCase()}`, 'arbitrum')).toEqual({ ok: true });
    expect(checkAddress(BAD_CHECKSUM, 'ethereum')).toMatchObject({ ok: false, code: 'invalid_checksum' });
    expect(checkAddress(TRON, 'tron')).toEqual({ ok: true });
    expect(checkAddress(TRON_BAD_CHECKSUM, 'tron')).toMatchObject({ ok: false, code: 'invalid_checksum' });
    expect(checkAddress(SOLANA, 'solana')).toEqual({ ok: true });
    // 32 to 44 base58 characters that do not decode to 32 bytes.
    expect(checkAddress('1'.repeat(40), 'solana')).toMatchObject({ ok: false, code: 'invalid_format' });
    expect(checkAddress(TRON, 'ethereum')).toMatchObject({ ok: false, code: 'network_mismatch' });
    expect(checkAddress(CHECKSUMMED, 'solana')).toMatchObject({ ok: false, code: 'network_mismatch' });
    expect(checkAddress(SOLANA, 'tron')).toMatchObject({ ok: false, code: 'network_mismatch' });
    expect(checkAddress('0x1234', 'polygon')).toMatchObject({ ok: false, code: 'invalid_format' });
  });
});

describe.each(BACKENDS)('stablecoins on %s', (backend) => {
  let t: TestApp;
  let operator: string;
  let usdc: string;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
    usdc = await fundedWallet(t, '100000.000000', 'USDC');
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  const withdraw = (destination: unknown, amount = '10.000000', source = usdc, currency = 'USDC') =>
    api(t, 'POST', '/v1/transfers', { body: { source, destination, amount, currency } });
  const drainDeposits = async () => {
    for (let i = 0; i < 5; i++) if ((await runDepositWorkerOnce(t.deps, { log: quietLog })) === 0) return;
  };
  const setRoute = (asset: string, network: string, body: unknown) =>
    api(t, 'PUT', `/v1/digital-asset-routes/${asset}/${network}`, { key: operator, body });

  it('validates withdrawal addresses per family: checksums, and the wrong family named', async () => {
    for (const address of [CHECKSUMMED, CHECKSUMMED.toLowerCase()]) {
      const ok = await withdraw(crypto(address));
      expect(ok.statusCode, ok.body).toBe(201);
    }
    expect((await withdraw(crypto(SOLANA, 'solana'))).statusCode).toBe(201);
    const usdt = await fundedWallet(t, '100.000000', 'USDT');
    expect((await withdraw(crypto(TRON, 'tron', 'USDT'), '10.000000', usdt, 'USDT')).statusCode).toBe(201);

    for (const [destination, code, source, currency] of [
      [crypto(BAD_CHECKSUM), 'invalid_checksum', usdc, 'USDC'],
      [crypto(TRON), 'network_mismatch', usdc, 'USDC'],
      [crypto(SOLANA), 'network_mismatch', usdc, 'USDC'],
      [crypto('0x1234'), 'invalid_format', usdc, 'USDC'],
      [crypto(CHECKSUMMED, 'solana'), 'network_mismatch', usdc, 'USDC'],
      [crypto(TRON_BAD_CHECKSUM, 'tron', 'USDT'), 'invalid_checksum', usdt, 'USDT'],
      [crypto(CHECKSUMMED, 'tron', 'USDT'), 'network_mismatch', usdt, 'USDT'],
    ] as const) {
      const refused = await withdraw(destination, '10.000000', source, currency);
      expect(refused.statusCode, JSON.stringify(destination)).toBe(400);
      expect(refused.data).toMatchObject({ code: 'validation_error', param: 'destination.address' });
      expect(refused.data.errors[0], JSON.stringify(destination)).toMatchObject({
        param: 'destination.address',
        code,
      });
    }
  });

  it('enforces route limits: single and daily, with evidence of the change', async () => {
    const set = await setRoute('USDC', 'base', {
      status: 'enabled',
      limits: { single_max: '100.000000', daily_max: '250' },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.data.limits).toEqual({ single_max: '100.000000', daily_max: '250.000000' });
    expect(
      (await setRoute('USDC', 'base', { status: 'enabled', limits: { single_max: '-1' } })).statusCode,
    ).toBe(400);
    const toBase = crypto(CHECKSUMMED, 'base');
    const single = await withdraw(toBase, '100.000001');
    expect(single.statusCode).toBe(422);
    expect(single.data).toMatchObject({ code: 'limit_exceeded', param: 'amount', limit: 'route_single' });
    expect((await withdraw(toBase, '100.000000')).statusCode).toBe(201);
    // Two at once for what is left of the day: one passes, the other is refused.
    const racing = await Promise.all([withdraw(toBase, '100.000000'), withdraw(toBase, '100.000000')]);
    expect(racing.map((r) => r.statusCode).sort()).toEqual([201, 422]);
    const daily = racing.find((r) => r.statusCode === 422);
    expect(daily?.data).toMatchObject({
      code: 'limit_exceeded',
      limit: 'route_daily',
      remaining: '50.000000',
    });
    expect((await withdraw(toBase, '50.000000')).statusCode).toBe(201);
    // A canceled withdrawal gives its amount back to the day.
    const listed = await api(t, 'GET', '/v1/transfers?limit=1');
    expect((await api(t, 'POST', `/v1/transfers/${listed.data.data[0].id}/cancel`)).statusCode).toBe(200);
    expect((await withdraw(toBase, '50.000000')).statusCode).toBe(201);
    // Other routes are not limited by this one.
    expect((await withdraw(crypto(CHECKSUMMED), '500.000000')).statusCode).toBe(201);

    const cleared = await setRoute('USDC', 'base', { status: 'enabled', limits: { daily_max: null } });
    expect(cleared.data.limits).toEqual({ single_max: '100.000000', daily_max: null });
    expect((await withdraw(toBase, '100.000000')).statusCode).toBe(201);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=digital_asset.routes.update', { key: operator });
    const limits = evidence.data.data.filter((r: any) => r.data.change === 'limits');
    expect(limits.map((r: any) => r.data.to_limits)).toEqual([
      { single_max: '100.000000', daily_max: null },
      { single_max: '100.000000', daily_max: '250.000000' },
    ]);
    await setRoute('USDC', 'base', { status: 'enabled', limits: { single_max: null } });
  });

  it('issues one deposit address per wallet and network, on approved routes only', async () => {
    const issued = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    expect(issued.data).toMatchObject({
      object: 'deposit_address',
      wallet: usdc,
      asset: 'USDC',
      network: 'ethereum',
    });
    expect(checkAddress(issued.data.address, 'ethereum')).toEqual({ ok: true });
    const again = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      body: { network: 'ethereum' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.data).toEqual(issued.data);
    const solana = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      body: { network: 'solana' },
    });
    expect(checkAddress(solana.data.address, 'solana')).toEqual({ ok: true });

    const unapproved = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      body: { network: 'tron' },
    });
    expect(unapproved.statusCode).toBe(422);
    expect(unapproved.data).toMatchObject({ code: 'route_not_approved', param: 'network' });
    expect((await setRoute('USDC', 'polygon', { status: 'disabled' })).statusCode).toBe(200);
    const disabled = await api(t, 'POST', `/v1/wallets/${usdc}/deposit-addresses`, {
      body: { network: 'polygon' },
    });
    expect(disabled.data.code).toBe('route_not_approved');
    await setRoute('USDC', 'polygon', { status: 'enabled' });

    const usdt = await fundedWallet(t, '0', 'USDT');
    const tron = await api(t, 'POST', `/v1/wallets/${usdt}/deposit-addresses`, { body: { network: 'tron' } });
    expect(tron.statusCode, tron.body).toBe(201);
    expect(checkAddress(tron.data.address, 'tron')).toEqual({ ok: true });

    const kes = await fundedWallet(t, '0');
    const fiat = await api(t, 'POST', `/v1/wallets/${kes}/deposit-addresses`, {
      body: { network: 'ethereum' },
    });
    expect(fiat.statusCode).toBe(400);
    expect(fiat.data.param).toBe('id');

    const listed = await api(t, 'GET', `/v1/wallets/${usdc}/deposit-addresses`);
    expect(listed.data.data.map((a: any) => a.network)).toEqual(['ethereum', 'solana']);

    // Two first requests at once issue one address.
    const fresh = await fundedWallet(t, '0', 'USDC');
    const both = await Promise.all(
      [1, 2].map(() =>
        api(t, 'POST', `/v1/wallets/${fresh}/deposit-addresses`, { body: { network: 'base' } }),
      ),
    );
    expect(both.map((r) => r.statusCode).sort()).toEqual([200, 201]);
    expect(both[0]?.data.id).toBe(both[1]?.data.id);
  });

  const newDepositWallet = async (network = 'ethereum') => {
    const wallet = await fundedWallet(t, '0', 'USDC');
    const address = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, { body: { network } });
    return { wallet, address: address.data.address as string };
  };
  const deposit = (body: Record<string, unknown>) => api(t, 'POST', '/v1/sandbox/chain/deposits', { body });
  /** The deposit's events, oldest first. */
  const depositEventTypes = async (id: string) => {
    const types: string[] = [];
    for (const type of ['deposit.detected', 'deposit.credited', 'deposit.reorged']) {
      const events = await api(t, 'GET', `/v1/events?type=${type}&limit=100`);
      for (const e of events.data.data) if (e.data.deposit_id === id) types.push(`${e.created_at} ${e.type}`);
    }
    return types.sort().map((line) => line.split(' ')[1]);
  };
  const advance = (blocks: number, network = 'ethereum') =>
    api(t, 'POST', '/v1/sandbox/chain/advance', { body: { network, blocks } });

  it('credits a deposit only once it has its confirmations, through an inbound transfer', async () => {
    const { wallet, address } = await newDepositWallet();
    const seen = await deposit({ network: 'ethereum', address, amount: '500.000000' });
    expect(seen.statusCode, seen.body).toBe(201);
    expect(seen.data).toMatchObject({
      status: 'pending',
      confirmations: 0,
      required_confirmations: 12,
      chain_state: 'included',
      transfer: null,
    });
    expect(seen.data.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    await drainDeposits();
    await advance(11);
    await drainDeposits();
    expect((await api(t, 'GET', `/v1/deposits/${seen.data.id}`)).data).toMatchObject({
      status: 'pending',
      confirmations: 11,
    });
    expect((await balanceOf(t, wallet)).available).toBe('0.000000');
    await advance(1);
    await drainDeposits();
    const credited = (await api(t, 'GET', `/v1/deposits/${seen.data.id}`)).data;
    expect(credited).toMatchObject({
      status: 'credited',
      confirmations: 12,
      transfer: expect.stringMatching(/^tr_/),
    });
    expect((await balanceOf(t, wallet)).available).toBe('500.000000');
    const transfer = (await api(t, 'GET', `/v1/transfers/${credited.transfer}`)).data;
    expect(transfer).toMatchObject({
      direction: 'inbound',
      rail: 'digital_asset',
      status: 'settled',
      amount: '500.000000',
      rail_reference: seen.data.tx_hash,
      status_reason: 'deposit',
    });
    expect(await depositEventTypes(seen.data.id)).toEqual(['deposit.detected', 'deposit.credited']);
    // A final deposit does not reorganise.
    const late = await api(t, 'POST', `/v1/sandbox/chain/deposits/${seen.data.id}/reorg`);
    expect(late.statusCode).toBe(409);
    const listed = await api(t, 'GET', `/v1/deposits?wallet=${wallet}&status=credited`);
    expect(listed.data.data.map((d: any) => d.id)).toEqual([seen.data.id]);
  });

  it('a reorganisation before finality drops the deposit: never credited', async () => {
    const { wallet, address } = await newDepositWallet();
    const seen = await deposit({ network: 'ethereum', address, amount: '75.000000', confirmations: 3 });
    await advance(5);
    await drainDeposits();
    const reorg = await api(t, 'POST', `/v1/sandbox/chain/deposits/${seen.data.id}/reorg`);
    expect(reorg.statusCode, reorg.body).toBe(200);
    expect(reorg.data).toMatchObject({ chain_state: 'dropped', status: 'pending' });
    await drainDeposits();
    await advance(50);
    await drainDeposits();
    const dropped = (await api(t, 'GET', `/v1/deposits/${seen.data.id}`)).data;
    expect(dropped).toMatchObject({ status: 'reorged', confirmations: 8, transfer: null });
    expect((await balanceOf(t, wallet)).current).toBe('0.000000');
    expect(await depositEventTypes(seen.data.id)).toEqual(['deposit.detected', 'deposit.reorged']);
    // The same transaction mined again after the reorganisation is a new deposit.
    const again = await deposit({
      network: 'ethereum',
      address,
      amount: '75.000000',
      tx_hash: seen.data.tx_hash,
    });
    expect(again.statusCode).toBe(201);
    expect(again.data.id).not.toBe(seen.data.id);
  });

  it('a deposit notified twice (and at once) is one deposit, credited once', async () => {
    const { wallet, address } = await newDepositWallet('solana');
    const body = {
      network: 'solana',
      address,
      amount: '42.500000',
      tx_hash: '0x'.padEnd(66, 'a'),
      log_index: 2,
    };
    const [first, second] = await Promise.all([deposit(body), deposit(body)]);
    expect([first.statusCode, second.statusCode].sort()).toEqual([200, 201]);
    expect(first.data.id).toBe(second.data.id);
    expect((await deposit(body)).statusCode).toBe(200);
    const conflicting = await deposit({ ...body, amount: '43.000000' });
    expect(conflicting.statusCode).toBe(409);
    expect(conflicting.data.param).toBe('tx_hash');
    // Another log index of the same transaction is another transfer.
    expect((await deposit({ ...body, log_index: 3 })).statusCode).toBe(201);
    await advance(32, 'solana');
    await Promise.all([drainDeposits(), drainDeposits()]);
    await drainDeposits();
    await deposit(body);
    await drainDeposits();
    expect((await balanceOf(t, wallet)).available).toBe('85.000000');
    const transfers = await api(t, 'GET', `/v1/transfers?wallet=${wallet}`);
    expect(transfers.data.data).toHaveLength(2);
  });

  it('the Travel Rule on deposits: the originator’s data kept, or its absence recorded', async () => {
    const { address } = await newDepositWallet();
    const small = await deposit({ network: 'ethereum', address, amount: '10.000000' });
    expect(small.data.travel_rule).toBeNull();
    const missing = await deposit({ network: 'ethereum', address, amount: '5000.000000' });
    expect(missing.data.travel_rule).toEqual({
      reference: expect.stringMatching(/^evd_/),
      required: true,
      received: false,
    });
    const given = await deposit({
      network: 'ethereum',
      address,
      amount: '5000.000000',
      travel_rule: {
        originator: { name: 'Sender Exchange Client', account: '0xabc', national_id: 'A1234567' },
      },
    });
    expect(given.statusCode, given.body).toBe(201);
    const malformed = await deposit({
      network: 'ethereum',
      address,
      amount: '5000.000000',
      travel_rule: { originator: { name: 'X', account: 'Y' } },
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.data.param).toBe('travel_rule.originator');
    const evidence = await api(t, 'GET', '/v1/evidence?kind=deposit.travel_rule', { key: operator });
    const byDeposit = new Map(evidence.data.data.map((r: any) => [r.data.deposit_id, r.data]));
    expect(byDeposit.get(missing.data.id)).toMatchObject({
      required: true,
      received: false,
      originator: null,
    });
    expect(byDeposit.get(given.data.id)).toMatchObject({
      required: true,
      received: true,
      originator: { name: 'Sender Exchange Client', national_id: 'A1234567' },
      beneficiary: { name: 'Test Customer', account: address },
    });
  });

  const walletsOf = async (fiat: string, fiatAmount: string, asset = 'USDC') => {
    const owner = await createCustomer(t);
    const open = async (currency: string, amount: string) => {
      const w = await api(t, 'POST', '/v1/wallets', { body: { owner, currency } });
      if (amount !== '0') await api(t, 'POST', `/v1/sandbox/wallets/${w.data.id}/fund`, { body: { amount } });
      return w.data.id as string;
    };
    return { owner, fiat: await open(fiat, fiatAmount), coin: await open(asset, '0') };
  };
  const quote = (from: string, to: string, amount: string) =>
    api(t, 'POST', '/v1/conversions/quote', { body: { from_wallet: from, to_wallet: to, amount } });
  const execute = (quoteId: string, key?: string) =>
    api(t, 'POST', '/v1/conversions', {
      body: { quote: quoteId },
      ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
    });

  it('mints and redeems at the quoted rate, rounded down, in balanced entries per currency', async () => {
    const rates = await api(t, 'GET', '/v1/conversion-rates');
    expect(rates.data.data).toContainEqual(
      expect.objectContaining({ from: 'KES', to: 'USDC', rate: '0.0077' }),
    );
    const { fiat, coin } = await walletsOf('KES', '10000.00');
    const mint = await quote(fiat, coin, '1000.01');
    expect(mint.statusCode, mint.body).toBe(201);
    // 1000.01 × 0.0077 = 7.700077 exactly.
    expect(mint.data).toMatchObject({
      direction: 'mint',
      from_amount: '1000.01',
      to_amount: '7.700077',
      rate: '0.0077',
      fee: '0.00',
      status: 'open',
    });
    const done = await execute(mint.data.id, 'mint-1');
    expect(done.statusCode, done.body).toBe(201);
    expect(done.data).toMatchObject({ quote: mint.data.id, from_amount: '1000.01', to_amount: '7.700077' });
    const replay = await execute(mint.data.id, 'mint-1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(done.body);
    const twice = await execute(mint.data.id);
    expect(twice.statusCode).toBe(409);
    expect(twice.data.param).toBe('quote');
    expect((await balanceOf(t, fiat)).available).toBe('8999.99');
    expect((await balanceOf(t, coin)).available).toBe('7.700077');
    // One entry per currency, each balanced, through the organization's conversion accounts.
    const [debit, credit] = done.data.journal_entries;
    const fiatEntries = (await api(t, 'GET', `/v1/ledger/entries?wallet=${fiat}`)).data.data;
    const coinEntries = (await api(t, 'GET', `/v1/ledger/entries?wallet=${coin}`)).data.data;
    expect(fiatEntries.map((e: any) => e.id)).toContain(debit);
    expect(coinEntries.map((e: any) => e.id)).toContain(credit);
    const accounts = await api(t, 'GET', '/v1/ledger/accounts?kind=conversion');
    expect(accounts.data.data.map((a: any) => a.currency).sort()).toEqual(['KES', 'USDC']);

    // 7.700077 × 128.5 = 989.4598945 KES, rounded down to 989.45.
    const redeem = await quote(coin, fiat, '7.700077');
    expect(redeem.data).toMatchObject({ direction: 'redeem', to_amount: '989.45' });
    expect((await execute(redeem.data.id)).statusCode).toBe(201);
    expect((await balanceOf(t, coin)).available).toBe('0.000000');
    expect((await balanceOf(t, fiat)).available).toBe('9989.44');
    const events = await api(t, 'GET', '/v1/events?type=conversion.completed');
    expect(events.data.data[0].data).toMatchObject({ direction: 'redeem', to_amount: '989.45' });
  });

  it('refuses what is not a conversion, a pair without a rate, an expired quote', async () => {
    const { fiat, coin } = await walletsOf('KES', '1000.00');
    const stranger = (await walletsOf('KES', '0')).coin;
    expect((await quote(fiat, stranger, '10.00')).data).toMatchObject({
      param: 'to_wallet',
      code: 'validation_error',
    });
    const other = await fundedWallet(t, '0', 'KES');
    expect((await quote(fiat, other, '10.00')).data.errors[0].code).toMatch(
      /unsupported_conversion|customer_mismatch/,
    );
    await execute((await quote(fiat, coin, '100.00')).data.id);
    const tiny = await quote(coin, fiat, '0.000001');
    expect(tiny.data.errors[0]).toMatchObject({ param: 'amount', code: 'too_small' });
    const usd = await walletsOf('GHS', '100.00');
    const noRate = await quote(usd.fiat, usd.coin, '10.00');
    expect(noRate.statusCode).toBe(422);
    expect(noRate.data).toMatchObject({ code: 'rate_unavailable', param: 'to_wallet' });

    const expiring = await quote(fiat, coin, '100.00');
    t.deps.now = () => new Date(Date.now() + 31_000);
    const expired = await execute(expiring.data.id);
    t.deps.now = realNow;
    expect(expired.statusCode).toBe(422);
    expect(expired.data).toMatchObject({ code: 'quote_expired', param: 'quote' });
    expect((await balanceOf(t, fiat)).available).toBe('900.00');
  });

  it('two conversions racing for one wallet: one passes, the other is insufficient_funds', async () => {
    const { fiat, coin } = await walletsOf('KES', '1000.00');
    const a = await quote(fiat, coin, '600.00');
    const b = await quote(fiat, coin, '600.00');
    const raced = await Promise.all([execute(a.data.id), execute(b.data.id)]);
    expect(raced.map((r) => r.statusCode).sort()).toEqual([201, 422]);
    expect(raced.find((r) => r.statusCode === 422)?.data).toMatchObject({ code: 'insufficient_funds' });
    expect((await balanceOf(t, fiat)).available).toBe('400.00');
    expect((await balanceOf(t, coin)).available).toBe('4.620000');
    // The same quote executed twice at once converts once.
    const c = await quote(fiat, coin, '100.00');
    const same = await Promise.all([execute(c.data.id), execute(c.data.id)]);
    expect(same.map((r) => r.statusCode).sort()).toEqual([201, 409]);
    expect((await balanceOf(t, fiat)).available).toBe('300.00');
  });

  it('rates are an operator’s data, validated and recorded', async () => {
    expect((await api(t, 'PUT', '/v1/conversion-rates', { body: { rates: [] } })).statusCode).toBe(403);
    for (const [rates, param] of [
      [[{ from: 'KES', to: 'UGX', rate: '30' }], 'rates[0].to'],
      [[{ from: 'USDC', to: 'USDT', rate: '1' }], 'rates[0].to'],
      [[{ from: 'KES', to: 'USDC', rate: '0' }], 'rates[0].rate'],
      [[{ from: 'KES', to: 'USDC', rate: '0.1234567890123' }], 'rates[0].rate'],
      [
        [
          { from: 'KES', to: 'USDC', rate: '1' },
          { from: 'KES', to: 'USDC', rate: '2' },
        ],
        'rates[1].from',
      ],
    ] as const) {
      const refused = await api(t, 'PUT', '/v1/conversion-rates', { key: operator, body: { rates } });
      expect(refused.statusCode, JSON.stringify(rates)).toBe(400);
      expect(refused.data.param).toBe(param);
    }
    const set = await api(t, 'PUT', '/v1/conversion-rates', {
      key: operator,
      body: { rates: [{ from: 'GHS', to: 'USDC', rate: '0.0650' }] },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.data.data).toEqual([expect.objectContaining({ from: 'GHS', to: 'USDC', rate: '0.065' })]);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=conversion.rates.update', { key: operator });
    expect(evidence.data.data.map((r: any) => r.data.change)).toEqual(['replace', 'defaults']);
  });

  it('leaves the ledger and every evidence chain intact', async () => {
    await expectLedgerHealthy(t);
    const reports = await verifyEvidence(t.deps.store);
    expect(reports.filter((r) => r.break)).toEqual([]);
  });
});

describe.each(BACKENDS.filter((b) => b === 'postgres'))(
  'route limits across writer lanes on %s',
  (backend) => {
    let t: TestApp;
    let operator: string;
    beforeAll(async () => {
      t = await startTestApp(backend, 'sandbox', { ledgerWriterLanes: 4 });
      operator = await complianceKey(t);
    });
    afterAll(() => t.close());

    // The batches of different lanes also meet on the rail's shared clearing account today; the route's own
    // lock keeps the rule whatever the accounts do.
    it('withdrawals from many wallets, in parallel lanes, never pass the daily limit together', async () => {
      const set = await api(t, 'PUT', '/v1/digital-asset-routes/USDC/arbitrum', {
        key: operator,
        body: { status: 'enabled', limits: { daily_max: '100.000000' } },
      });
      expect(set.statusCode, set.body).toBe(200);
      const wallets = await Promise.all(
        Array.from({ length: 6 }, () => fundedWallet(t, '50.000000', 'USDC')),
      );
      const answers = await Promise.all(
        wallets.map((source) =>
          api(t, 'POST', '/v1/transfers', {
            body: {
              source,
              destination: crypto(CHECKSUMMED, 'arbitrum'),
              amount: '30.000000',
              currency: 'USDC',
            },
          }),
        ),
      );
      expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(3);
      for (const refused of answers.filter((a) => a.statusCode !== 201)) {
        expect(refused.data).toMatchObject({ code: 'limit_exceeded', limit: 'route_daily' });
      }
      await expectLedgerHealthy(t);
    });
  },
);

describe.each(BACKENDS)('stablecoins in production on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(() => t.close());

  it('refuses deposit addresses without a custody provider, and has no simulated chain', async () => {
    // Outside the sandbox an organization that named no products has mobile_money only.
    const { key } = await newOrganization(t);
    const owner = await createCustomer(t, key);
    const closed = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'USDC' } });
    expect(closed.data).toMatchObject({ code: 'product_not_enabled', product: 'stablecoins' });
    const enabled = await api(t, 'PATCH', '/v1/organization', {
      key,
      body: { products: ['mobile_money', 'stablecoins'] },
    });
    expect(enabled.statusCode, enabled.body).toBe(200);
    const wallet = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency: 'USDC' } });
    const refused = await api(t, 'POST', `/v1/wallets/${wallet.data.id}/deposit-addresses`, {
      key,
      body: { network: 'ethereum' },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.data).toMatchObject({ code: 'custody_not_configured', param: 'network' });
    const chain = await api(t, 'POST', '/v1/sandbox/chain/advance', {
      body: { network: 'ethereum', blocks: 1 },
    });
    expect(chain.statusCode).toBe(404);
    expect((await api(t, 'GET', '/v1/conversion-rates', { key })).data.data).toEqual([]);
    // Outside the sandbox a pair's first rate has nothing to bound it: it needs a second member's approval.
    const first = await api(t, 'PUT', '/v1/conversion-rates', {
      key,
      body: { rates: [{ from: 'KES', to: 'USDC', rate: '0.0077' }] },
    });
    expect(first.statusCode, first.body).toBe(202);
    expect(first.data).toMatchObject({ object: 'change', kind: 'conversion_rate', status: 'pending' });
    expect((await api(t, 'GET', '/v1/conversion-rates', { key })).data.data).toEqual([]);
  });
});
