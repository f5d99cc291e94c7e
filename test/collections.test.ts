/**
 * Collections through HTTP: a payer asked to pay into a wallet, by the sandbox's simulation and through the
 * partners' simulators (M-Pesa STK push, MTN request-to-pay) with their callbacks over real HTTP. Nothing is
 * posted until the rail confirms; then one inbound transfer credits the wallet, once, whatever the
 * duplicates; an unanswered request expires; the ledger verifies after.
 */

import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { COLLECTION_EXPIRY_MS } from '../src/modules/collections/domain.ts';
import {
  type CollectionRailResolver,
  partnerCollectionRail,
  runCollectionWorkerOnce,
  simulatedCollectionRail,
} from '../src/modules/collections/workers.ts';
import { RAIL_CALLBACK_RETRY_MS } from '../src/modules/railPartners/useCases/callbacks.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailCallbackSweepOnce } from '../src/modules/railPartners/workers.ts';
import { darajaSimulatorPartner } from '../src/partnerSimulators.ts';
import { type DarajaSimulator, startDarajaSimulator } from '../src/simulators/mpesaDaraja/index.ts';
import { type MomoSimulator, startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const WAIT_MS = 5_000;
const POLL_MS = 20;

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

describe.each(BACKENDS)('collections on %s', (backend) => {
  let t: TestApp;
  let daraja: DarajaSimulator;
  let momo: MomoSimulator;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    daraja = await startDarajaSimulator();
    momo = await startMomoSimulator();
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await daraja?.close();
    await momo?.close();
    await t?.close();
  });

  const simulated = simulatedCollectionRail();
  const resolve: CollectionRailResolver = async (c) => {
    const partner = await railPartnerDirectory(t.deps).forRail(c.organizationId, c.rail, c.network);
    return partner ? partnerCollectionRail(partner) : simulated;
  };
  const work = () => runCollectionWorkerOnce(t.deps, resolve, { log: () => {} });
  /** The sweep, as it runs once a deferred callback is due again. */
  const sweepLater = async () => {
    t.deps.now = () => new Date(Date.now() + RAIL_CALLBACK_RETRY_MS + 1_000);
    try {
      await runRailCallbackSweepOnce(t.deps, railPartnerDirectory(t.deps));
    } finally {
      t.deps.now = realNow;
    }
  };

  async function collect(key: string, wallet: string, phone: string, amount = '25.00', network = 'mpesa') {
    const created = await api(t, 'POST', '/v1/collections', {
      key,
      body: { wallet, amount, payer: { type: 'mobile_money', phone, network } },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }
  const collectionOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/collections/${id}`, { key })).data;

  it('credits the wallet once the simulated payer approves, with an inbound transfer and events', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const created = await api(t, 'POST', '/v1/collections', {
      key,
      headers: { 'idempotency-key': 'collect-once' },
      body: {
        wallet,
        amount: '25.00',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      },
    });
    expect(created.data).toMatchObject({
      object: 'collection',
      status: 'pending',
      amount: '25.00',
      transfer: null,
    });
    const again = await api(t, 'POST', '/v1/collections', {
      key,
      headers: { 'idempotency-key': 'collect-once' },
      body: {
        wallet,
        amount: '25.00',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      },
    });
    expect(again.data.id).toBe(created.data.id);
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '0.00' });
    await work();
    expect((await collectionOf(key, created.data.id)).status).toBe('processing');
    await work();
    const done = await collectionOf(key, created.data.id);
    expect(done).toMatchObject({ status: 'succeeded', failure_code: null });
    const credit = (await api(t, 'GET', `/v1/transfers/${done.transfer}`, { key })).data;
    expect(credit).toMatchObject({ direction: 'inbound', status: 'settled', amount: '25.00' });
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '25.00' });
    const events = await api(t, 'GET', '/v1/events?limit=100', { key });
    const types = events.data.data.map((e: { type: string }) => e.type);
    for (const type of ['collection.created', 'collection.processing', 'collection.succeeded']) {
      expect(types).toContain(type);
    }
    const listed = await api(t, 'GET', `/v1/collections?wallet=${wallet}&status=succeeded`, { key });
    expect(listed.data.data.map((c: { id: string }) => c.id)).toEqual([created.data.id]);
    await expectLedgerHealthy(t);
  });

  it('a refusal fails it with the rail’s code, an unanswered one expires, and neither moves money', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const refused = await collect(key, wallet, '+254700000002');
    const silent = await collect(key, wallet, '+254700000003');
    await work();
    await work();
    expect(await collectionOf(key, refused)).toMatchObject({
      status: 'failed',
      failure_code: 'insufficient_funds',
    });
    expect((await collectionOf(key, silent)).status).toBe('processing');
    t.deps.now = () => new Date(Date.now() + COLLECTION_EXPIRY_MS + 1_000);
    try {
      await work();
    } finally {
      t.deps.now = realNow;
    }
    expect(await collectionOf(key, silent)).toMatchObject({
      status: 'failed',
      failure_code: 'collection_expired',
    });
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '0.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('refuses bad input with the offending param, and another organization’s wallet', async () => {
    const { key } = await newOrganization(t);
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const bad = async (body: Record<string, unknown>) =>
      (await api(t, 'POST', '/v1/collections', { key, body: { wallet, amount: '1.00', ...body } })).data;
    expect(
      await bad({ payer: { type: 'mobile_money', phone: '+256770000000', network: 'mpesa' } }),
    ).toMatchObject({
      param: 'payer.phone',
    });
    expect(
      await bad({
        currency: 'UGX',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      }),
    ).toMatchObject({ param: 'currency' });
    expect(
      await bad({
        amount: '1.001',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      }),
    ).toMatchObject({ param: 'amount' });
    const other = await newOrganization(t);
    const foreign = await api(t, 'POST', '/v1/collections', {
      key: other.key,
      body: {
        wallet,
        amount: '1.00',
        payer: { type: 'mobile_money', phone: '+254700000000', network: 'mpesa' },
      },
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('asks through M-Pesa (STK push): the callback credits once, a cancel fails it, a duplicate changes nothing', async () => {
    const { key } = await newOrganization(t);
    const configured = await api(t, 'POST', '/v1/rail-partners', {
      key,
      body: darajaSimulatorPartner(daraja.url),
    });
    expect(configured.statusCode, configured.body).toBe(201);
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const paid = await collect(key, wallet, '+254700000000', '40.00');
    const cancelled = await collect(key, wallet, '+254700000020', '5.00');
    const twice = await collect(key, wallet, '+254700000010', '7.00');
    await work();
    await daraja.idle();
    await sweepLater();
    expect(
      await eventually(
        () => collectionOf(key, paid),
        (c) => c.status === 'succeeded',
      ),
    ).toMatchObject({
      status: 'succeeded',
    });
    // The credit keeps M-Pesa's receipt (MpesaReceiptNumber), as the payer's SMS and the statement show it.
    const paidCredit = (
      await api(t, 'GET', `/v1/transfers/${(await collectionOf(key, paid)).transfer}`, { key })
    ).data;
    const paidPush = daraja.pushes.find((p) => p.amount === 40 && p.phoneNumber === '254700000000');
    expect(paidCredit.partner_receipt).toBe(paidPush?.receipt);
    expect(paidCredit.partner_receipt).toMatch(/^[A-Z0-9]{10}$/);
    expect(
      await eventually(
        () => collectionOf(key, cancelled),
        (c) => c.status === 'failed',
      ),
    ).toMatchObject({
      failure_code: 'payer_cancelled',
    });
    expect(
      (
        await eventually(
          () => collectionOf(key, twice),
          (c) => c.status === 'succeeded',
        )
      ).status,
    ).toBe('succeeded');
    await sweepLater();
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '47.00' });
    const callbacks = (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key })).data.data as {
      status: string;
    }[];
    expect(callbacks.filter((c) => c.status === 'duplicate')).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('asks through MTN MoMo (request-to-pay): the callback credits the UGX wallet', async () => {
    const { key } = await newOrganization(t);
    const configured = await api(t, 'POST', '/v1/rail-partners', {
      key,
      body: {
        partner: 'mtn_momo',
        settings: { base_url: momo.url, target_environment: momo.credentials.targetEnvironment },
        credentials: {
          api_user: momo.credentials.apiUser,
          api_key: momo.credentials.apiKey,
          collection_subscription_key: momo.credentials.collectionSubscriptionKey,
          disbursement_subscription_key: momo.credentials.disbursementSubscriptionKey,
        },
      },
    });
    expect(configured.statusCode, configured.body).toBe(201);
    const wallet = await fundedWallet(t, '0', 'UGX', key);
    const paid = await collect(key, wallet, '+256770000000', '3000', 'mtn');
    const declined = await collect(key, wallet, '+256770000013', '100', 'mtn');
    await work();
    await momo.whenIdle();
    await sweepLater();
    expect(
      (
        await eventually(
          () => collectionOf(key, paid),
          (c) => c.status === 'succeeded',
        )
      ).status,
    ).toBe('succeeded');
    expect(
      await eventually(
        () => collectionOf(key, declined),
        (c) => c.status === 'failed',
      ),
    ).toMatchObject({
      failure_code: 'payer_declined',
    });
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '3000' });
    await expectLedgerHealthy(t);
  });

  it('credits bank deposits by the wallet’s virtual account reference, each once; an unknown one is an exception', async () => {
    const org = await newOrganization(t);
    const key = org.key;
    const wallet = await fundedWallet(t, '0', 'KES', key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.data.reference).toMatch(/^MK[0-9]{12}$/);
    const again = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key });
    expect(again.statusCode).toBe(200);
    expect(again.data.reference).toBe(made.data.reference);
    expect((await api(t, 'GET', `/v1/wallets/${wallet}/virtual-account`, { key })).data.reference).toBe(
      made.data.reference,
    );
    const other = await newOrganization(t);
    expect(
      (await api(t, 'GET', `/v1/wallets/${wallet}/virtual-account`, { key: other.key })).statusCode,
    ).toBe(404);
    const reference = made.data.reference as string;
    const mistyped = `${reference.slice(0, -1)}${(Number(reference.at(-1)) + 1) % 10}`;
    const report = (deposits: Record<string, unknown>[], as = key) =>
      api(t, 'POST', '/v1/bank-deposits', { key: as, body: { deposits } });
    const writer = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] })).key;
    expect(
      (await report([{ bank_reference: 'x', reference, amount: '1.00', currency: 'KES' }], writer))
        .statusCode,
    ).toBe(403);
    const refused = await report([
      { bank_reference: 'B1', reference, amount: '1.00', currency: 'KES' },
      { bank_reference: 'B1', reference, amount: '1.001', currency: 'KES' },
    ]);
    expect(refused.statusCode).toBe(422);
    expect(refused.data.errors.map((e: { row: number; param: string }) => [e.row, e.param])).toEqual([
      [2, 'deposits.1.amount'],
    ]);
    const first = await report([
      {
        bank_reference: 'B1',
        reference: `${reference.slice(0, 6)} ${reference.slice(6)}`,
        amount: '120.00',
        currency: 'KES',
        payer_name: 'Asha',
      },
      { bank_reference: 'B2', reference: mistyped, amount: '5.00', currency: 'KES' },
      { bank_reference: 'B3', reference, amount: '5.00', currency: 'UGX' },
    ]);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.data.results.map((r: { outcome: string }) => r.outcome)).toEqual([
      'credited',
      'exception',
      'exception',
    ]);
    expect(first.data.results[0].collection).toMatchObject({
      status: 'succeeded',
      rail: 'bank',
      payer: { type: 'bank_transfer', name: 'Asha', bank_reference: 'B1' },
    });
    // Reported again later: a duplicate. The same new deposit in two reports at once: credited once.
    const later = await report([{ bank_reference: 'B1', reference, amount: '120.00', currency: 'KES' }]);
    expect(later.data.results[0].outcome).toBe('duplicate');
    const racing = await Promise.all([
      report([{ bank_reference: 'B5', reference, amount: '40.00', currency: 'KES' }]),
      report([{ bank_reference: 'B5', reference, amount: '40.00', currency: 'KES' }]),
    ]);
    expect(racing.map((r) => r.data.results[0].outcome).sort()).toEqual(['credited', 'duplicate']);
    expect(await balanceOf(t, wallet, key)).toMatchObject({ available: '160.00' });
    const open = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key })).data.data;
    expect(open.map((e: { kind: string }) => e.kind)).toEqual(['unmatched_deposit', 'unmatched_deposit']);
    await expectLedgerHealthy(t);
  });
});
