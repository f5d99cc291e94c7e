/**
 * Flutterwave's mobile-money transfers through the service, over real HTTP both ways: an organization with
 * no M-Pesa or MoMo partner of its own pays mobile-money wallets through Flutterwave (a contracted Daraja
 * wins for Safaricom), settled by webhook or polling once whatever arrives twice or late; a refused or
 * unsupported payout gives the money back. And a bank payout Flutterwave accepted while the worker died
 * before recording it: the restarted worker finds it by its reference and pays nothing twice.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeRailPartnerDirectory,
  railPartnerDirectory,
} from '../src/modules/railPartners/useCases/directory.ts';
import { type RailResolver, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS,
  type FlutterwaveSimulator,
  startFlutterwaveSimulator,
} from '../src/simulators/flutterwave/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** Long enough for the rail worker to record the transfer's reference before its webhook comes. */
const TEST_PROCESSING_MS = 300;
/** Past every poll interval and retry delay: the rail worker asks about every payout due. */
const LATER_MS = 10 * 60_000;
/** The worker's time limit on one rail call here, and the simulator's delay that outlasts it. */
const TEST_CALL_TIMEOUT_MS = 200;
const TEST_SLOW_ANSWER_MS = 600;
const SENDER = { sender_name: 'Mkoba Ltd', sender_country: 'KE', sender_mobile_number: '254700000000' };

interface StoredCallback {
  status: string;
  body: string;
}

describe.each(BACKENDS)('Flutterwave mobile money on %s', (backend) => {
  let t: TestApp;
  let sim: FlutterwaveSimulator;
  let org: TestOrganization;
  const realNow = () => new Date();

  async function configureFlutterwave(organization: TestOrganization): Promise<void> {
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: organization.key,
      body: {
        partner: 'flutterwave',
        settings: { base_url: sim.url, ...SENDER },
        credentials: { secret_key: sim.credentials.secretKey, secret_hash: sim.credentials.secretHash },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    sim.setWebhookUrl(`${created.data.callback_url}/webhooks`);
  }

  /** A Daraja partner for the organization (its calls are never answered here: only routing is looked at). */
  async function configureDaraja(organization: TestOrganization) {
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: organization.key,
      body: {
        partner: 'mpesa_daraja',
        settings: { base_url: sim.url, short_code: '600000', initiator_name: 'apiop' },
        credentials: {
          consumer_key: 'key',
          consumer_secret: 'secret',
          security_credential: 'credential',
          passkey: 'passkey',
        },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created;
  }

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFlutterwaveSimulator({ processingMs: TEST_PROCESSING_MS });
    org = await newOrganization(t);
    await configureFlutterwave(org);
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await sim?.close();
    await t?.close();
  });

  const directoryResolver: RailResolver = (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer);
  const railWork = (resolver = directoryResolver, callTimeoutMs?: number) =>
    runRailWorkerOnce(t.deps, resolver, { callTimeoutMs });
  /** A rail pass as if the clock were `times` LATER_MS on: every poll and retry due by then is made. */
  async function railWorkLater(times = 1): Promise<void> {
    t.deps.now = () => new Date(Date.now() + times * LATER_MS);
    try {
      await railWork();
    } finally {
      t.deps.now = realNow;
    }
  }
  const transferOf = async (id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key: org.key })).data;
  const callbacksAbout = async (id: string) =>
    (
      (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[]
    ).filter((callback) => callback.body.includes(id));
  const atFlutterwave = (id: string) => sim.transfers().filter((transfer) => transfer.reference === id);

  /** A mobile-money payout from a funded wallet (nothing sent yet); its id and wallet. */
  async function mobilePayout(destination: Record<string, string>, amount: string, currency: string) {
    const wallet = await fundedWallet(t, '100000', currency, org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source: wallet, destination: { type: 'mobile_money', ...destination }, amount, currency },
    });
    expect(created.statusCode, created.body).toBe(201);
    return { id: created.data.id as string, wallet };
  }

  it('routes mobile money to Flutterwave only where the organization has no partner of the network', async () => {
    const partnerOf = async (organizationId: string, network: string) =>
      (await railPartnerDirectory(t.deps).forRail(organizationId, 'mobile_money', network))?.adapter.partner;
    for (const network of ['mpesa', 'mtn', 'airtel', 'tigo', 'vodacom']) {
      expect(await partnerOf(org.organizationId, network)).toBe('flutterwave');
    }
    const both = await newOrganization(t);
    await configureFlutterwave(both);
    const daraja = await configureDaraja(both);
    // A contracted Daraja wins for Safaricom; MTN and the rest stay with Flutterwave.
    expect(await partnerOf(both.organizationId, 'mpesa')).toBe('mpesa_daraja');
    expect(await partnerOf(both.organizationId, 'mtn')).toBe('flutterwave');
    const disabled = await api(t, 'PATCH', `/v1/rail-partners/${daraja.data.id}`, {
      key: both.key,
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(await partnerOf(both.organizationId, 'mpesa')).toBe('flutterwave');
  });

  it('pays an M-Pesa wallet in Kenya (MPS, sender in meta), settled once by its webhook; a repeat is a duplicate', async () => {
    const { id, wallet } = await mobilePayout(
      { network: 'mpesa', phone: '+254712000001', name: 'Akinyi Kimwei' },
      '1500.00',
      'KES',
    );
    await railWork();
    const [sent] = atFlutterwave(id);
    expect(sent).toMatchObject({
      bank_code: 'MPS',
      account_number: '254712000001',
      amount: 1500,
      currency: 'KES',
      full_name: 'Akinyi Kimwei',
      meta: { sender: 'Mkoba Ltd', sender_country: 'KE', mobile_number: '254700000000' },
    });
    await sim.waitForWebhooks({ id: sent?.id });
    expect(await transferOf(id)).toMatchObject({ status: 'settled', rail_reference: String(sent?.id) });
    await sim.resendTransferWebhook(sent?.id ?? 0);
    expect((await callbacksAbout(id)).map((callback) => callback.status).sort()).toEqual([
      'applied',
      'duplicate',
    ]);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('98500.00');
    expect(atFlutterwave(id)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('fails a payout Flutterwave reports FAILED and gives the money back; sends nothing for a network, currency or payee it cannot take', async () => {
    const refused = await mobilePayout(
      { network: 'mtn', phone: `+25677000${FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS.fails}`, name: 'Okello' },
      '15000',
      'UGX',
    );
    await railWork();
    const [sent] = atFlutterwave(refused.id);
    expect(sent).toMatchObject({ bank_code: 'MTN', currency: 'UGX' });
    await sim.waitForWebhooks({ id: sent?.id });
    expect(await transferOf(refused.id)).toMatchObject({
      status: 'failed',
      failure_code: 'partner_rejected',
    });
    expect((await balanceOf(t, refused.wallet, org.key)).available).toBe('100000');
    // Airtel in Kenya is not on Flutterwave's list; a wallet without the beneficiary's name cannot be paid.
    const unlisted = await mobilePayout(
      { network: 'airtel', phone: '+254733000001', name: 'Wanjiru' },
      '100.00',
      'KES',
    );
    const nameless = await mobilePayout({ network: 'mtn', phone: '+256770000001' }, '15000', 'UGX');
    await railWork();
    for (const { id, wallet } of [unlisted, nameless]) {
      expect(await transferOf(id)).toMatchObject({
        status: 'failed',
        failure_code: 'destination_not_supported',
      });
      expect(atFlutterwave(id)).toHaveLength(0);
      expect((await balanceOf(t, wallet, org.key)).available).toMatch(/^100000(\.00)?$/);
    }
    await expectLedgerHealthy(t);
  });

  it('survives an answer that comes too late: the retry finds the first transfer by reference, polling settles it, the late webhook changes nothing', async () => {
    sim.loseWebhooks(true);
    const { id, wallet } = await mobilePayout(
      { network: 'mtn', phone: '+256770000002', name: 'Achieng Okello' },
      '20000',
      'UGX',
    );
    sim.setLatency(TEST_SLOW_ANSWER_MS);
    try {
      await railWork(directoryResolver, TEST_CALL_TIMEOUT_MS);
      expect(await transferOf(id)).toMatchObject({ status: 'processing', rail_reference: null });
      // Flutterwave still takes the POST the worker gave up on.
      await expect.poll(() => atFlutterwave(id).length).toBe(1);
    } finally {
      sim.setLatency(0);
    }
    await railWorkLater();
    const [sent] = atFlutterwave(id);
    expect(await transferOf(id)).toMatchObject({ status: 'processing', rail_reference: String(sent?.id) });
    const posts = sim.requests.filter((r) => r.method === 'POST' && r.body.includes(id));
    expect(posts.map((r) => r.status)).toEqual([200, 400]);
    await sim.whenIdle();
    sim.loseWebhooks(false);
    await railWorkLater(2);
    expect(await transferOf(id)).toMatchObject({ status: 'settled' });
    await sim.resendTransferWebhook(sent?.id ?? 0);
    expect((await callbacksAbout(id)).map((callback) => callback.status)).toEqual(['unchanged']);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('80000');
    expect(atFlutterwave(id)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('a bank payout Flutterwave accepted while the worker died before recording it: found by reference after the restart, paid once', async () => {
    sim.loseWebhooks(true);
    const wallet = await fundedWallet(t, '10000.00', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: {
          type: 'bank_account',
          bank_code: '044',
          account_number: FLUTTERWAVE_SIMULATOR_ACCOUNTS.resolvesAndSucceeds.accountNumber,
        },
        amount: '2500.00',
        currency: 'KES',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    // The worker's process dies the moment Flutterwave's acceptance is back, before anything is written.
    const diesAfterAcceptance: RailResolver = async (transfer) => {
      const resolved = await directoryResolver(transfer);
      if (resolved === undefined) return undefined;
      const adapter = resolved.adapter;
      return {
        ...resolved,
        adapter: {
          ...adapter,
          submit: async (request, now) => {
            await adapter.submit(request, now);
            throw new Error('the worker process died here');
          },
        },
      };
    };
    await railWork(diesAfterAcceptance);
    expect(await transferOf(id)).toMatchObject({ status: 'processing', rail_reference: null });
    expect(atFlutterwave(id)).toHaveLength(1);
    await sim.whenIdle();
    // A new process: its own adapters and breakers, nothing remembered but what the database holds.
    closeRailPartnerDirectory(t.deps);
    await railWorkLater();
    await sim.whenIdle();
    await railWorkLater(2);
    const [sent] = atFlutterwave(id);
    expect(atFlutterwave(id)).toHaveLength(1);
    // The restarted worker's POST under the same reference is refused; the GET by reference finds the first.
    const posts = sim.requests.filter((r) => r.method === 'POST' && r.body.includes(id));
    expect(posts.map((r) => r.status)).toEqual([200, 400]);
    expect(sim.requests.some((r) => r.path === `/v3/transfers?reference=${id}`)).toBe(true);
    expect(await transferOf(id)).toMatchObject({ status: 'settled', rail_reference: String(sent?.id) });
    expect((await balanceOf(t, wallet, org.key)).available).toBe('7500.00');
    sim.loseWebhooks(false);
    await expectLedgerHealthy(t);
  });

  it('a payout stays with the partner that carries it: Daraja configured, or Flutterwave disabled, while it is in flight', async () => {
    sim.loseWebhooks(true);
    const mpesa = await mobilePayout(
      { network: 'mpesa', phone: '+254712000009', name: 'Akinyi Kimwei' },
      '700.00',
      'KES',
    );
    const mtn = await mobilePayout({ network: 'mtn', phone: '+256770000009', name: 'Okello' }, '9000', 'UGX');
    await railWork();
    expect(atFlutterwave(mpesa.id)).toHaveLength(1);
    expect(atFlutterwave(mtn.id)).toHaveLength(1);
    // Safaricom is contracted directly now: new M-Pesa payouts go to Daraja, this one is still Flutterwave's.
    const daraja = await configureDaraja(org);
    // And Flutterwave is disabled: it takes nothing new, but answers for what it accepted.
    const flutterwave = (
      (await api(t, 'GET', '/v1/rail-partners', { key: org.key })).data.data as Array<{
        id: string;
        partner: string;
        status: string;
      }>
    ).find((p) => p.partner === 'flutterwave' && p.status === 'active');
    const disable = (status: string) =>
      api(t, 'PATCH', `/v1/rail-partners/${flutterwave?.id}`, { key: org.key, body: { status } });
    expect((await disable('disabled')).statusCode).toBe(200);
    try {
      await sim.whenIdle();
      await railWorkLater(2);
      for (const { id } of [mpesa, mtn]) {
        expect(await transferOf(id)).toMatchObject({ status: 'settled' });
        expect(atFlutterwave(id)).toHaveLength(1);
      }
      expect((await balanceOf(t, mpesa.wallet, org.key)).available).toBe('99300.00');
      expect((await balanceOf(t, mtn.wallet, org.key)).available).toBe('91000');
    } finally {
      expect((await disable('active')).statusCode).toBe(200);
      await api(t, 'PATCH', `/v1/rail-partners/${daraja.data.id}`, {
        key: org.key,
        body: { status: 'disabled' },
      });
      sim.loseWebhooks(false);
    }
    await expectLedgerHealthy(t);
  });
});
