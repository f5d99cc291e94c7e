/**
 * The Travel Rule and approved digital-asset routes through HTTP: crypto_address destinations on enabled
 * routes only; below, at and above the threshold; every missing or malformed field named in one 422; a
 * country's own threshold; exact conversion at the boundary; the data kept as evidence, read only by
 * operators, and absent from the transfer, its replay and its events; the simulated chain settling with a
 * transaction hash; the ledger and the evidence chains intact.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvidence } from '../src/app/evidence.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  createCustomer,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { drainRails, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

const ADDRESS = '0x52908400098527886e0f7030069857d2e4169ee7';
const SOLANA_ADDRESS = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
const TRON_ADDRESS = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const ORIGINATOR_NAME = 'Wanjiku Kamau Originator';

const completeTravelRule = () => ({
  originator: { name: ORIGINATOR_NAME, account: 'ACC-778899', date_of_birth: '1988-07-21' },
  beneficiary: { name: 'Otieno Beneficiary', institution: 'Example Exchange Ltd' },
});

const crypto = (address = ADDRESS, network = 'ethereum', asset = 'USDC') => ({
  type: 'crypto_address',
  asset,
  network,
  address,
});

describe.each(BACKENDS)('the Travel Rule on %s', (backend) => {
  let t: TestApp;
  let operator: string;
  let usdc: string;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend);
    operator = await complianceKey(t);
    // A verified business (tier 2) pays: stablecoins count against tier limits at their USD equivalent,
    // and these payments are at and above the Travel Rule threshold.
    const customers = await api(t, 'GET', '/v1/customers?limit=100');
    const business = customers.data.data.find((c: { name: string }) => c.name === 'Baraka Logistics Ltd');
    const wallet = await api(t, 'POST', '/v1/wallets', { body: { owner: business.id, currency: 'USDC' } });
    usdc = wallet.data.id;
    await api(t, 'POST', `/v1/sandbox/wallets/${usdc}/fund`, { body: { amount: '1000000.000000' } });
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await t.close();
  });

  const pay = (
    amount: string,
    options: {
      source?: string;
      destination?: unknown;
      travelRule?: unknown;
      key?: string;
      currency?: string;
    } = {},
  ) =>
    api(t, 'POST', '/v1/transfers', {
      ...(options.key ? { headers: { 'Idempotency-Key': options.key } } : {}),
      body: {
        source: options.source ?? usdc,
        destination: options.destination ?? crypto(),
        amount,
        currency: options.currency ?? 'USDC',
        ...(options.travelRule === undefined ? {} : { travel_rule: options.travelRule }),
      },
    });

  const putSettings = (body: unknown, key = operator) =>
    api(t, 'PUT', '/v1/travel-rule/settings', { key, body });
  const defaultSettings = { thresholds: { default: '1000.00' }, rates: { USDC: '1', USDT: '1' } };

  it('lists the default routes and lets only an operator change them', async () => {
    const listed = await api(t, 'GET', '/v1/digital-asset-routes');
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.data.data.map((r: any) => `${r.asset}/${r.network}/${r.status}`)).toEqual([
      'USDC/base/enabled',
      'USDC/ethereum/enabled',
      'USDC/polygon/enabled',
      'USDC/solana/enabled',
      'USDT/ethereum/enabled',
      'USDT/tron/enabled',
    ]);
    const asIntegrator = await api(t, 'PUT', '/v1/digital-asset-routes/USDC/polygon', {
      body: { status: 'disabled' },
    });
    expect(asIntegrator.statusCode).toBe(403);
    expect(asIntegrator.data.code).toBe('insufficient_permissions');
    const unknownNetwork = await api(t, 'PUT', '/v1/digital-asset-routes/USDC/dogechain', {
      key: operator,
      body: { status: 'enabled' },
    });
    expect(unknownNetwork.statusCode).toBe(400);
    expect(unknownNetwork.data.param).toBe('network');
  });

  it('refuses a route that is disabled or not approved (422 route_not_approved), and takes it once enabled', async () => {
    const disabled = await api(t, 'PUT', '/v1/digital-asset-routes/USDC/polygon', {
      key: operator,
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.data).toMatchObject({ asset: 'USDC', network: 'polygon', status: 'disabled' });
    const onDisabled = await pay('10.000000', { destination: crypto(ADDRESS, 'polygon') });
    expect(onDisabled.statusCode).toBe(422);
    expect(onDisabled.data).toMatchObject({ code: 'route_not_approved', param: 'destination.network' });
    expect(onDisabled.data.detail).toContain('disabled');

    const usdt = await fundedWallet(t, '100.000000', 'USDT');
    const unlisted = await pay('10.000000', {
      source: usdt,
      currency: 'USDT',
      destination: crypto(ADDRESS, 'polygon', 'USDT'),
    });
    expect(unlisted.data).toMatchObject({ code: 'route_not_approved', param: 'destination.network' });
    expect(unlisted.data.detail).toContain('not an approved route');

    expect(
      (
        await api(t, 'PUT', '/v1/digital-asset-routes/USDC/polygon', {
          key: operator,
          body: { status: 'enabled' },
        })
      ).statusCode,
    ).toBe(200);
    const enabled = await pay('10.000000', { destination: crypto(ADDRESS, 'polygon') });
    expect(enabled.statusCode, enabled.body).toBe(201);
    expect(enabled.data).toMatchObject({ rail: 'digital_asset', status: 'pending', travel_rule: null });
    const evidence = await api(t, 'GET', '/v1/evidence?kind=digital_asset.routes.update', { key: operator });
    expect(evidence.data.data.map((r: any) => r.data.change)).toEqual(['status', 'status', 'defaults']);
  });

  it('checks the destination: its address per network, its asset against the currency, travel_rule only for crypto', async () => {
    for (const [destination, param] of [
      [crypto('0x1234'), 'destination.address'],
      [crypto(ADDRESS, 'solana'), 'destination.address'],
      [crypto(SOLANA_ADDRESS, 'tron', 'USDT'), 'destination.address'],
      [crypto(ADDRESS, 'ethereum', 'DAI'), 'destination.asset'],
      [{ type: 'crypto_address', asset: 'USDC', network: 'ethereum', memo: 'x' }, 'destination.memo'],
      [crypto(ADDRESS, 'ethereum', 'USDT'), 'destination.asset'],
    ] as const) {
      const response = await pay('10.000000', { destination });
      expect(response.statusCode, JSON.stringify(destination)).toBe(400);
      expect(response.data.param, JSON.stringify(destination)).toBe(param);
    }
    expect((await pay('10.000000', { destination: crypto(SOLANA_ADDRESS, 'solana') })).statusCode).toBe(201);
    const usdt = await fundedWallet(t, '100.000000', 'USDT');
    const tron = await pay('10.000000', {
      source: usdt,
      currency: 'USDT',
      destination: crypto(TRON_ADDRESS, 'tron', 'USDT'),
    });
    expect(tron.statusCode, tron.body).toBe(201);
    const kes = await fundedWallet(t, '1000.00');
    const onMobileMoney = await pay('10.00', {
      source: kes,
      currency: 'KES',
      destination: { type: 'mobile_money', network: 'mpesa', phone: '+254711000111' },
      travelRule: completeTravelRule(),
    });
    expect(onMobileMoney.statusCode).toBe(400);
    expect(onMobileMoney.data).toMatchObject({ param: 'travel_rule' });
  });

  it('below the threshold: no data needed; data given is checked and kept', async () => {
    const bare = await pay('999.999999');
    expect(bare.statusCode, bare.body).toBe(201);
    expect(bare.data.travel_rule).toBeNull();
    const given = await pay('999.999999', { travelRule: completeTravelRule() });
    expect(given.statusCode, given.body).toBe(201);
    expect(given.data.travel_rule).toEqual({ reference: expect.stringMatching(/^evd_/), required: false });
    const malformed = await pay('999.999999', {
      travelRule: {
        ...completeTravelRule(),
        originator: { name: 'A', account: 'B', date_of_birth: '1988-13-01' },
      },
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.data).toMatchObject({
      code: 'validation_error',
      param: 'travel_rule.originator.date_of_birth',
    });
  });

  it('at the threshold without data: a 422 naming every field, not recorded under the key', async () => {
    const missing = await pay('1000.000000', { key: 'tr-at-threshold' });
    expect(missing.statusCode).toBe(422);
    expect(missing.data).toMatchObject({
      code: 'travel_rule_required',
      param: 'travel_rule.originator.name',
    });
    expect(missing.data.errors.map((e: any) => [e.param, e.code])).toEqual([
      ['travel_rule.originator.name', 'missing'],
      ['travel_rule.originator.account', 'missing'],
      ['travel_rule.originator', 'missing'],
      ['travel_rule.beneficiary.name', 'missing'],
    ]);
    expect(missing.data.detail).toContain('1000.00 USD');
    // Completed, the same request goes through under the same key.
    const completed = await pay('1000.000000', { key: 'tr-at-threshold', travelRule: completeTravelRule() });
    expect(completed.statusCode, completed.body).toBe(201);
    expect(completed.data.travel_rule).toEqual({ reference: expect.stringMatching(/^evd_/), required: true });
  });

  it('names each missing or malformed field on its own', async () => {
    const cases: [unknown, string[]][] = [
      [
        { originator: { account: 'A1', address: 'Nairobi' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.name'],
      ],
      [
        { originator: { name: 'A', address: 'Nairobi' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.account'],
      ],
      [{ originator: { name: 'A', account: 'A1' }, beneficiary: { name: 'B' } }, ['travel_rule.originator']],
      [
        { originator: { name: 'A', account: 'A1', national_id: '12345678' }, beneficiary: {} },
        ['travel_rule.beneficiary.name'],
      ],
      [
        { originator: { name: '  ', account: 'A1', national_id: '12345678' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.name'],
      ],
      [
        { originator: { name: 'A', account: 'A1', date_of_birth: '21/07/1988' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.date_of_birth'],
      ],
      [
        { originator: { name: 'A', account: 'A1', date_of_birth: '2999-01-01' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.date_of_birth'],
      ],
      [
        { originator: { name: 'A', account: 'A1', national_id: '#1' }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.national_id'],
      ],
      [
        { originator: { name: 'A', account: 'A1', address: 'x'.repeat(501) }, beneficiary: { name: 'B' } },
        ['travel_rule.originator.address'],
      ],
      [
        {
          originator: { name: 'A', account: 'A1', address: 'Nairobi' },
          beneficiary: { name: 'B', account: '' },
        },
        ['travel_rule.beneficiary.account'],
      ],
    ];
    for (const [travelRule, params] of cases) {
      const response = await pay('5000.000000', { travelRule });
      expect(response.statusCode, JSON.stringify(travelRule)).toBe(422);
      expect(response.data.code).toBe('travel_rule_required');
      expect(
        response.data.errors.map((e: any) => e.param),
        JSON.stringify(travelRule),
      ).toEqual(params);
      expect(response.data.param).toBe(params[0]);
    }
    // A field of the wrong shape is a 400, as everywhere.
    const unknownField = await pay('5000.000000', { travelRule: { originator: { nickname: 'A' } } });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.data.param).toBe('travel_rule.originator.nickname');
  });

  it('keeps the data as evidence for operators only, never in the transfer, its replay or its events', async () => {
    const first = await pay('2500.000000', { key: 'tr-evidence', travelRule: completeTravelRule() });
    expect(first.statusCode, first.body).toBe(201);
    const replay = await pay('2500.000000', { key: 'tr-evidence', travelRule: completeTravelRule() });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const id = first.data.id as string;
    const fetched = await api(t, 'GET', `/v1/transfers/${id}`);
    const events = await api(t, 'GET', `/v1/events?resource=${id}`);
    expect(events.data.data.length).toBeGreaterThan(0);
    for (const text of [first.body, replay.body, fetched.body, events.body]) {
      expect(text).not.toContain(ORIGINATOR_NAME);
      expect(text).not.toContain('1988-07-21');
    }
    expect(fetched.data.travel_rule).toEqual(first.data.travel_rule);

    expect((await api(t, 'GET', `/v1/transfers/${id}/travel-rule`)).statusCode).toBe(403);
    const read = await api(t, 'GET', `/v1/transfers/${id}/travel-rule`, { key: operator });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.data).toEqual({
      object: 'travel_rule',
      reference: first.data.travel_rule.reference,
      transfer_id: id,
      required: true,
      jurisdiction: 'default',
      threshold: '1000.00',
      amount_usd: '2500.00',
      rate: '1',
      asset: 'USDC',
      network: 'ethereum',
      address: ADDRESS,
      originator: {
        name: ORIGINATOR_NAME,
        account: 'ACC-778899',
        address: null,
        national_id: null,
        date_of_birth: '1988-07-21',
      },
      beneficiary: { name: 'Otieno Beneficiary', account: ADDRESS, institution: 'Example Exchange Ltd' },
      created_at: expect.any(String),
    });
    const evidence = await api(t, 'GET', `/v1/transfers/${id}/evidence`, { key: operator });
    expect(evidence.data.data.map((r: any) => r.kind)).toContain('transfer.travel_rule');

    const none = await pay('10.000000');
    const noData = await api(t, 'GET', `/v1/transfers/${none.data.id}/travel-rule`, { key: operator });
    expect(noData.statusCode).toBe(404);
    const otherOrganization = await newOrganizationKey(t, ['compliance']);
    expect(
      (await api(t, 'GET', `/v1/transfers/${id}/travel-rule`, { key: otherOrganization })).statusCode,
    ).toBe(404);
  });

  it('settings: read by anyone, replaced by operators, validated', async () => {
    const read = await api(t, 'GET', '/v1/travel-rule/settings');
    expect(read.statusCode, read.body).toBe(200);
    expect(read.data).toMatchObject({
      object: 'travel_rule_settings',
      thresholds: { default: '1000.00' },
      rates: { USDC: '1', USDT: '1', KES: '0.0077' },
    });
    expect((await putSettings(defaultSettings, t.key)).statusCode).toBe(403);
    for (const [body, param] of [
      [{ thresholds: { KE: '500.00' }, rates: { USDC: '1', USDT: '1' } }, 'thresholds.default'],
      [{ thresholds: { default: '1000.00' }, rates: { USDC: '1' } }, 'rates.USDT'],
      [{ thresholds: { default: '1000.00', ke: '5.00' }, rates: { USDC: '1', USDT: '1' } }, 'thresholds.ke'],
      [{ thresholds: { default: '1000.001' }, rates: { USDC: '1', USDT: '1' } }, 'thresholds.default'],
      [{ thresholds: { default: '1000.00' }, rates: { USDC: '0', USDT: '1' } }, 'rates.USDC'],
      [{ thresholds: { default: '1000.00' }, rates: { USDC: '1', USDT: '1', XYZ: '1' } }, 'rates.XYZ'],
    ] as const) {
      const refused = await putSettings(body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.data.param, JSON.stringify(body)).toBe(param);
    }
    const replaced = await putSettings({
      thresholds: { default: '900', KE: '500.5' },
      rates: { USDT: '1.0', USDC: '1' },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.data).toMatchObject({
      thresholds: { default: '900.00', KE: '500.50' },
      rates: { USDC: '1', USDT: '1' },
    });
    expect((await putSettings(defaultSettings)).statusCode).toBe(200);
    const changes = await api(t, 'GET', '/v1/evidence?kind=travel_rule.settings.update', { key: operator });
    expect(changes.data.data.map((r: any) => r.data.change)).toEqual(['replace', 'replace', 'defaults']);
  });

  it('uses the originating customer’s country threshold when its verified identity has one', async () => {
    const kenyan = await createCustomer(t, t.key, 'Neema Mwangi');
    const verified = await api(t, 'POST', `/v1/customers/${kenyan}/verifications`, {
      body: {
        type: 'individual',
        legal_name: 'Neema Mwangi',
        date_of_birth: '1991-03-09',
        national_id: { type: 'national_id', number: '27001234' },
        phone: '+254711555666',
        address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
      },
    });
    expect(verified.data.status, verified.body).toBe('verified');
    const wallet = (await api(t, 'POST', '/v1/wallets', { body: { owner: kenyan, currency: 'USDC' } })).data
      .id;
    await api(t, 'POST', `/v1/sandbox/wallets/${wallet}/fund`, { body: { amount: '10000.000000' } });

    expect(
      (
        await putSettings({
          thresholds: { default: '1000.00', KE: '400.00' },
          rates: { USDC: '1', USDT: '1' },
        })
      ).statusCode,
    ).toBe(200);
    const fromKenya = await pay('450.000000', { source: wallet });
    expect(fromKenya.statusCode).toBe(422);
    expect(fromKenya.data.detail).toContain('400.00 USD or more (jurisdiction KE)');
    // A customer with no verified identity has no jurisdiction: the default threshold applies.
    const unverified = await fundedWallet(t, '1000.000000', 'USDC');
    expect((await pay('450.000000', { source: unverified })).statusCode).toBe(201);
    const withData = await pay('450.000000', { source: wallet, travelRule: completeTravelRule() });
    expect(withData.statusCode, withData.body).toBe(201);
    const read = await api(t, 'GET', `/v1/transfers/${withData.data.id}/travel-rule`, { key: operator });
    expect(read.data).toMatchObject({ jurisdiction: 'KE', threshold: '400.00', required: true });
    expect((await putSettings(defaultSettings)).statusCode).toBe(200);
  });

  it('converts exactly: amount × rate is compared with the threshold in integers', async () => {
    // 100 × 0.57 is 56.99999999999999 in floating point; exactly, it is the threshold.
    expect(0.57 * 100).toBeLessThan(57);
    expect(
      (await putSettings({ thresholds: { default: '57.00' }, rates: { USDC: '0.57', USDT: '1' } }))
        .statusCode,
    ).toBe(200);
    expect((await pay('100.000000')).data.code).toBe('travel_rule_required');
    const under = await pay('99.999999');
    expect(under.statusCode, under.body).toBe(201);
    const at = await pay('100.000000', { travelRule: completeTravelRule() });
    const read = await api(t, 'GET', `/v1/transfers/${at.data.id}/travel-rule`, { key: operator });
    expect(read.data).toMatchObject({
      amount_usd: '57.00',
      rate: '0.57',
      threshold: '57.00',
      required: true,
    });
    expect((await putSettings(defaultSettings)).statusCode).toBe(200);
  });

  it('settles on the simulated chain with a transaction hash; magic addresses fail or time out', async () => {
    const settles = await pay('25.000000', { destination: crypto(SOLANA_ADDRESS, 'solana') });
    const blocked = await pay('25.000000', {
      destination: crypto('0x00000000000000000000000000000000000000B1'),
    });
    const stuck = await pay('25.000000', {
      destination: crypto('0x00000000000000000000000000000000000000e0'),
    });
    for (const r of [settles, blocked, stuck]) expect(r.statusCode, r.body).toBe(201);
    // The workers' clock stands still while they hand over and check, so the confirmation cannot be due yet
    // however slow the passes are; then it moves past it.
    const handOver = Date.now();
    t.deps.now = () => new Date(handOver);
    try {
      await drainRails(t);
    } finally {
      t.deps.now = realNow;
    }
    const confirming = await api(t, 'GET', `/v1/transfers/${settles.data.id}`);
    expect(confirming.data.status).toBe('processing');
    t.deps.now = () => new Date(handOver + 30_000);
    try {
      await drainRails(t);
    } finally {
      t.deps.now = realNow;
    }

    const settled = (await api(t, 'GET', `/v1/transfers/${settles.data.id}`)).data;
    expect(settled).toMatchObject({ status: 'settled', ledger_state: 'posted', rail: 'digital_asset' });
    expect(settled.rail_reference).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settled.rail_reference).toBe(
      `0x${createHash('sha256')
        .update(settles.data.id as string)
        .digest('hex')}`,
    );
    expect((await api(t, 'GET', `/v1/transfers/${blocked.data.id}`)).data).toMatchObject({
      status: 'failed',
      failure_code: 'address_blocked',
      ledger_state: 'voided',
    });
    expect((await api(t, 'GET', `/v1/transfers/${stuck.data.id}`)).data).toMatchObject({
      status: 'processing',
      status_reason: 'rail_timeout',
    });
  });

  it('leaves the ledger and every evidence chain intact', async () => {
    await expectLedgerHealthy(t);
    const reports = await verifyEvidence(t.deps.store);
    expect(reports.filter((r) => r.break)).toEqual([]);
  });
});
