/**
 * M-Pesa payouts to paybills and tills through the service: an organization's M-Pesa (Daraja) partner
 * carries its paybill and till transfers, the rail worker submits them as B2B payment requests to the
 * Daraja simulator (a real HTTP server), and the simulator's results come back over real HTTP to the
 * service's callback address. Settling, an insufficient float, duplicated, late and missing results, and a
 * retried submit (never a second payment) are each tested; the ledger verifies after each.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transfer } from '../src/domain/transferRecord.ts';
import type { MpesaDarajaConfig } from '../src/modules/railPartners/partners/mpesaDaraja/connection.ts';
import { mpesaDarajaRail } from '../src/modules/railPartners/partners/mpesaDaraja/rail.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { RAIL_NOT_CONFIGURED_FAILURE, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { guardedFetch } from '../src/outbound/guard.ts';
import { MalformedCallbackError, type PartnerRail } from '../src/rails/partner.ts';
import { payoutRailResolver, startSandboxSimulators } from '../src/railWork.ts';
import {
  B2B_PATH,
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';
import { mobileMoneyPayout } from './support/payouts.ts';

/** In the retried-submit case: the simulator's delay before answering, and the worker's shorter patience. */
const SLOW_SIMULATOR_MS = 400;
const IMPATIENT_CALL_TIMEOUT_MS = 100;
/** A shortcode of its own for the insufficient-float case, so draining its float leaves the others alone. */
const DRAINED_SHORT_CODE = '600997';
/** A callback base nothing listens on: the simulator's results to it are lost (a missing callback). */
const DEAD_PUBLIC_URL = 'http://127.0.0.1:9';

const paybill = (business_number: string, account_reference: string) => ({
  type: 'paybill',
  business_number,
  account_reference,
});
const till = (till_number: string) => ({ type: 'till', till_number });

describe.each(BACKENDS)('M-Pesa B2B payouts on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  let publicUrl: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    t.deps.publicUrl = publicUrl;
    sim = await startDarajaSimulator();
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  const darajaBody = (shortCode: string = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode) => ({
    partner: 'mpesa_daraja',
    settings: {
      base_url: sim.url,
      short_code: shortCode,
      initiator_name: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
    },
    credentials: {
      consumer_key: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
      consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
      security_credential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
      passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
    },
  });

  /** A new organization with Daraja configured and a funded KES wallet. */
  async function configured(
    shortCode?: string,
  ): Promise<{ org: TestOrganization; wallet: string; partner: string }> {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', { key: org.key, body: darajaBody(shortCode) });
    expect(created.statusCode, created.body).toBe(201);
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    return { org, wallet, partner: created.data.id };
  }

  /** The rail worker as production runs it: the organization's partners, no simulated rails behind them. */
  const work = (options: { callTimeoutMs?: number } = {}) =>
    runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
      ...options,
      log: () => {},
    });

  async function send(key: string, wallet: string, destination: unknown, amount = '10.00') {
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination, amount, currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  const transferOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
  const settledOrFailed = (key: string, id: string) =>
    eventually(
      () => transferOf(key, id),
      (tr) => tr.status === 'settled' || tr.status === 'failed',
    );
  const callbacksOf = async (key: string, transfer: string) =>
    (await api(t, 'GET', `/v1/rail-callbacks?transfer=${transfer}`, { key })).data.data as {
      status: string;
      path: string;
    }[];
  const entryKinds = async (key: string, transfer: string) =>
    (
      (await api(t, 'GET', `/v1/ledger/entries?transfer=${transfer}`, { key })).data.data as {
        kind: string;
      }[]
    )
      .map((entry) => entry.kind)
      .sort();
  const b2bRequestsFor = (transferId: string) =>
    sim.requests.filter(
      (r) =>
        r.path === B2B_PATH && (r.body as { Remarks?: string } | undefined)?.Remarks?.includes(transferId),
    );
  const dueNow = (id: string) =>
    t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]);

  it('pays a paybill and a till through B2B: each settles once, with one posting', async () => {
    const { org, wallet } = await configured();
    const toPaybill = await send(org.key, wallet, paybill('888880', 'INV-2026-001'));
    const toTill = await send(org.key, wallet, till('5544332'));
    const paymentsBefore = sim.payments.length;
    await work();
    await sim.idle();
    for (const id of [toPaybill, toTill]) {
      expect(await settledOrFailed(org.key, id)).toMatchObject({ status: 'settled', rail_reference: id });
      expect((await callbacksOf(org.key, id)).map((c) => [c.path, c.status])).toEqual([
        [`b2b/result/${id}`, 'applied'],
      ]);
      expect(await entryKinds(org.key, id)).toEqual(['hold', 'post']);
    }
    expect(sim.payments.length).toBe(paymentsBefore + 2);
    const [paybillRequest] = b2bRequestsFor(toPaybill);
    expect(paybillRequest?.body).toMatchObject({
      CommandID: 'BusinessPayBill',
      SenderIdentifierType: '4',
      RecieverIdentifierType: '4',
      Amount: 10,
      PartyA: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
      PartyB: '888880',
      AccountReference: 'INV-2026-001',
      ResultURL: expect.stringMatching(new RegExp(`/b2b/result/${toPaybill}$`)),
      QueueTimeOutURL: expect.stringMatching(new RegExp(`/b2b/timeout/${toPaybill}$`)),
    });
    const [tillRequest] = b2bRequestsFor(toTill);
    expect(tillRequest?.body).toMatchObject({
      CommandID: 'BusinessBuyGoods',
      RecieverIdentifierType: '2',
      PartyB: '5544332',
    });
    expect(tillRequest?.body).not.toHaveProperty('AccountReference');
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data).toMatchObject({ available: '980.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('an insufficient float fails the payout insufficient_float and releases its hold', async () => {
    const { org, wallet } = await configured(DRAINED_SHORT_CODE);
    // Another client of the same shortcode pays out all but 5 shillings of its float.
    const drainer = mpesaDarajaRail(
      {
        fetch: guardedFetch('allow_loopback'),
        baseUrl: sim.url,
        consumerKey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
        consumerSecret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
        shortCode: DRAINED_SHORT_CODE,
        initiatorName: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
        securityCredential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
        passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
      },
      { baseUrl: `${DEAD_PUBLIC_URL}/callbacks/drain` },
    );
    const drained = await drainer.submit(
      {
        idempotencyReference: 'tr_drain',
        transfer: mobileMoneyPayout('+254700000000', 'mpesa', {
          id: 'tr_drain',
          amountMinor: BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS - 5) * 100n,
          rail: 'till',
          network: null,
          destination: { type: 'till', till_number: '5544332' },
        }),
      },
      new Date(),
    );
    expect(drained.accepted).toBe(true);
    await sim.idle();
    const id = await send(org.key, wallet, paybill('888880', 'ACC-1'));
    await work();
    await sim.idle();
    expect(await settledOrFailed(org.key, id)).toMatchObject({
      status: 'failed',
      failure_code: 'insufficient_float',
    });
    expect(await entryKinds(org.key, id)).toEqual(['hold', 'void']);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data).toMatchObject({ available: '1000.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('a duplicated result changes nothing twice', async () => {
    const { org, wallet } = await configured();
    const id = await send(org.key, wallet, till('5544332'));
    await work();
    await sim.idle();
    expect((await settledOrFailed(org.key, id)).status).toBe('settled');
    // The simulator records a delivery once its answer is read, just after the service applied it.
    const delivered = await eventually(
      async () => sim.deliveries.find((d) => d.url.endsWith(`/b2b/result/${id}`)),
      (delivery) => delivery !== undefined,
    );
    if (!delivered) throw new Error('no result was delivered');
    const repost = () =>
      fetch(delivered.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: delivered.body,
      });
    // The same bytes again, twice: duplicates.
    for (let i = 0; i < 2; i++) {
      const again = await repost();
      expect(again.status).toBe(200);
      expect(((await again.json()) as { status: string }).status).toBe('duplicate');
    }
    expect((await transferOf(org.key, id)).status).toBe('settled');
    const stored = (await api(t, 'GET', '/v1/rail-callbacks', { key: org.key })).data.data as {
      status: string;
    }[];
    expect(stored.map((c) => c.status).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    const events = await api(t, 'GET', '/v1/events?type=transfer.settled&limit=100', { key: org.key });
    expect(
      events.data.data.filter((e: { data: { transfer_id: string } }) => e.data.transfer_id === id),
    ).toHaveLength(1);
    expect(await entryKinds(org.key, id)).toEqual(['hold', 'post']);
    await expectLedgerHealthy(t);
  });

  it('a missing result is recovered by the status query; the result arriving late after it changes nothing', async () => {
    const { org, wallet, partner } = await configured();
    const id = await send(org.key, wallet, paybill('888880', 'LOST-1'));
    // The partner is told to call back where nothing listens: its result is lost.
    t.deps.publicUrl = DEAD_PUBLIC_URL;
    try {
      await work();
      await sim.idle();
    } finally {
      t.deps.publicUrl = publicUrl;
    }
    const lost = await eventually(
      async () => sim.deliveries.find((d) => d.url.endsWith(`/b2b/result/${id}`)),
      (delivery) => delivery !== undefined,
    );
    expect(lost?.error).toBeDefined();
    expect((await transferOf(org.key, id)).status).toBe('processing');
    // The adapter is rebuilt (a new configuration version) with the live callback address; Daraja's id for
    // the request is read back from the database.
    const rotated = await api(t, 'PATCH', `/v1/rail-partners/${partner}`, {
      key: org.key,
      body: { credentials: { consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret } },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    await dueNow(id);
    await work();
    await sim.idle();
    expect(await settledOrFailed(org.key, id)).toMatchObject({ status: 'settled', rail_reference: id });
    expect((await callbacksOf(org.key, id)).map((c) => [c.path, c.status])).toEqual([
      [`b2b/status/${id}`, 'applied'],
    ]);
    // The lost result turns up after all.
    const late = await fetch(`${publicUrl}${new URL(lost?.url ?? '').pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: lost?.body ?? '',
    });
    expect(late.status).toBe(200);
    expect(((await late.json()) as { status: string }).status).toBe('unchanged');
    expect(b2bRequestsFor(id)).toHaveLength(1);
    expect(await entryKinds(org.key, id)).toEqual(['hold', 'post']);
    await expectLedgerHealthy(t);
  });

  it('a submit retried after the worker gave up on it sends no second request: one payment', async () => {
    const { org, wallet, partner } = await configured();
    const id = await send(org.key, wallet, paybill('888880', 'RETRY-1'), '25.00');
    const paymentsBefore = sim.payments.length;
    // Slow answers, and a result that is lost, so that nothing but the retry can move the payout.
    sim.setLatency(SLOW_SIMULATOR_MS);
    t.deps.publicUrl = DEAD_PUBLIC_URL;
    try {
      await work({ callTimeoutMs: IMPATIENT_CALL_TIMEOUT_MS });
      expect(await transferOf(org.key, id)).toMatchObject({
        status: 'processing',
        status_reason: 'rail_unavailable',
        rail_reference: null,
      });
      // The abandoned call still reaches M-Pesa, which pays.
      await eventually(
        async () => sim.payments.length,
        (count) => count === paymentsBefore + 1,
      );
      await eventually(
        async () => sim.deliveries.filter((d) => d.url.endsWith(`/b2b/result/${id}`)).length,
        (count) => count === 1,
      );
    } finally {
      sim.setLatency(0);
      t.deps.publicUrl = publicUrl;
    }
    // The worker submits again (a new adapter: the configuration changed): the recorded request is not repeated.
    await api(t, 'PATCH', `/v1/rail-partners/${partner}`, {
      key: org.key,
      body: { credentials: { consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret } },
    });
    await dueNow(id);
    await work();
    expect(await transferOf(org.key, id)).toMatchObject({ status: 'processing', rail_reference: id });
    expect(b2bRequestsFor(id)).toHaveLength(1);
    // Its status query settles it.
    await dueNow(id);
    await work();
    await sim.idle();
    expect(await settledOrFailed(org.key, id)).toMatchObject({ status: 'settled', rail_reference: id });
    expect(b2bRequestsFor(id)).toHaveLength(1);
    expect(sim.payments.length).toBe(paymentsBefore + 1);
    expect(await entryKinds(org.key, id)).toEqual(['hold', 'post']);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data).toMatchObject({ available: '975.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('a 5xx to the request leaves the payout processing, never sent again: the money stays held', async () => {
    const { org, wallet } = await configured();
    const id = await send(org.key, wallet, till('5544332'));
    sim.failNext(1, 500);
    await work();
    expect((await transferOf(org.key, id)).status_reason).toBe('rail_unavailable');
    await dueNow(id);
    await work();
    await dueNow(id);
    await work();
    expect(b2bRequestsFor(id)).toHaveLength(1);
    expect(await transferOf(org.key, id)).toMatchObject({ status: 'processing', rail_reference: id });
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data).toMatchObject({ available: '990.00', pending: '10.00' });
    await expectLedgerHealthy(t);
  });

  it('a disabled partner carries no paybill or till payout: rail_not_configured, the hold released', async () => {
    const { org, wallet, partner } = await configured();
    const disabled = await api(t, 'PATCH', `/v1/rail-partners/${partner}`, {
      key: org.key,
      body: { status: 'disabled' },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const id = await send(org.key, wallet, paybill('888880', 'OFF-1'));
    await work();
    expect(await transferOf(org.key, id)).toMatchObject({
      status: 'failed',
      failure_code: RAIL_NOT_CONFIGURED_FAILURE,
    });
    expect(b2bRequestsFor(id)).toHaveLength(0);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data).toMatchObject({ available: '1000.00', pending: '0.00' });
    await expectLedgerHealthy(t);
  });
});

/** The adapter on its own against the simulator: what it refuses before sending, and what it reads. */
describe("the M-Pesa adapter's B2B requests and results", () => {
  let sim: DarajaSimulator;
  beforeAll(async () => {
    sim = await startDarajaSimulator();
  });
  afterAll(async () => {
    await sim?.close();
  });

  const adapter = (overrides: Partial<MpesaDarajaConfig> = {}): PartnerRail =>
    mpesaDarajaRail(
      {
        fetch: guardedFetch('allow_loopback'),
        baseUrl: sim.url,
        consumerKey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
        consumerSecret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
        shortCode: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
        initiatorName: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
        securityCredential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
        passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
        ...overrides,
      },
      { baseUrl: `${DEAD_PUBLIC_URL}/callbacks/adapter` },
    );
  const tillPayout = (amountMinor = 10_00n, destination: unknown = till('5544332')) => {
    const transfer = mobileMoneyPayout('+254700000000', 'mpesa', {
      amountMinor,
      rail: 'till',
      network: null,
      destination: destination as Transfer['destination'],
    });
    return { idempotencyReference: transfer.id, transfer };
  };
  const requestsFor = (transferId: string) =>
    sim.requests.filter(
      (r) => r.path === B2B_PATH && (r.body as { Occassion?: string }).Occassion === transferId,
    );
  /** The result the simulator POSTed for a payout (to an address nothing listens on), as it arrived. */
  const resultOf = async (transferId: string) => {
    const delivery = await eventually(
      async () => sim.deliveries.find((d) => d.url.endsWith(`/b2b/result/${transferId}`)),
      (found) => found !== undefined,
    );
    if (!delivery) throw new Error('no result was POSTed');
    return { path: `b2b/result/${transferId}`, headers: {}, rawBody: delivery.body };
  };

  it('a repeated submit sends one request and answers with the same reference', async () => {
    const rail = adapter();
    const request = tillPayout();
    const first = await rail.submit(request, new Date());
    const again = await rail.submit(request, new Date());
    expect(first).toMatchObject({ accepted: true, reference: request.transfer.id });
    expect(again).toMatchObject({ accepted: true, reference: request.transfer.id });
    expect(requestsFor(request.transfer.id)).toHaveLength(1);
    const report = rail.parseCallback(await resultOf(request.transfer.id));
    expect(report).toMatchObject({
      kind: 'payout',
      reference: request.transfer.id,
      idempotencyReference: request.transfer.id,
      outcome: { kind: 'settled' },
      amountMinor: 10_00n,
    });
  });

  it('refuses what Daraja cannot carry before sending; a refused request may be sent again', async () => {
    const rail = adapter();
    const cents = tillPayout(10_50n);
    expect(await rail.submit(cents, new Date())).toEqual({
      accepted: false,
      failureCode: 'amount_not_supported',
    });
    const longReference = tillPayout(10_00n, paybill('888880', 'A-REFERENCE-OF-20CH'));
    expect(await rail.submit(longReference, new Date())).toEqual({
      accepted: false,
      failureCode: 'invalid_account_reference',
    });
    expect([...requestsFor(cents.transfer.id), ...requestsFor(longReference.transfer.id)]).toHaveLength(0);
    // Daraja refuses a malformed PartyA with a 400: it reached no payment system, so it is not held against a retry.
    const badShortCode = adapter({ shortCode: '12' });
    const refused = tillPayout();
    expect(await badShortCode.submit(refused, new Date())).toEqual({
      accepted: false,
      failureCode: 'partner_rejected',
    });
    expect(await badShortCode.submit(refused, new Date())).toMatchObject({ accepted: false });
    expect(requestsFor(refused.transfer.id)).toHaveLength(2);
  });

  it('reads a wrong credential as partner_configuration_error, and a queue time-out as nothing yet', async () => {
    const rail = adapter({ securityCredential: 'not-the-credential' });
    const request = tillPayout();
    expect(await rail.submit(request, new Date())).toMatchObject({ accepted: true });
    expect(rail.parseCallback(await resultOf(request.transfer.id))).toMatchObject({
      kind: 'payout',
      reference: request.transfer.id,
      outcome: { kind: 'failed', failureCode: 'partner_configuration_error' },
    });
    const notice = JSON.stringify({
      Result: { ResultType: 0, ResultCode: 1, OriginatorConversationID: 'AG_1', ConversationID: 'AG_2' },
    });
    expect(
      rail.parseCallback({ path: `b2b/timeout/${request.transfer.id}`, headers: {}, rawBody: notice }),
    ).toEqual({ kind: 'ignored', reason: 'b2b_queue_timeout' });
    expect(() => rail.parseCallback({ path: 'b2b/result/', headers: {}, rawBody: notice })).toThrow(
      MalformedCallbackError,
    );
    const noReceipt = JSON.stringify({
      Result: { ResultType: 0, ResultCode: 0, OriginatorConversationID: 'AG_1', ResultParameters: {} },
    });
    expect(() =>
      rail.parseCallback({ path: `b2b/result/${request.transfer.id}`, headers: {}, rawBody: noReceipt }),
    ).toThrow(MalformedCallbackError);
  });
});

/** The sandbox as `npm start` lays it out: the seeded organization's M-Pesa partner points at the simulator. */
describe.each(BACKENDS)('the sandbox with its partner simulators on %s', (backend) => {
  let t: TestApp;
  let stopSimulators: () => Promise<void>;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    stopSimulators = (await startSandboxSimulators(t.deps, () => {})).stop;
  });
  afterAll(async () => {
    await stopSimulators?.();
    await t?.close();
  });

  it("pays the sandbox organization's paybills and tills through the adapter and the simulator", async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const sent = [];
    // `000001` fails `invalid_account` on the built-in rails; the Daraja simulator pays it like any other.
    for (const destination of [paybill('000001', 'SANDBOX-1'), till('5544332')]) {
      const created = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination, amount: '10.00', currency: 'KES' },
      });
      expect(created.statusCode, created.body).toBe(201);
      sent.push(created.data.id as string);
    }
    await runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'sandbox'));
    for (const id of sent) {
      const transfer = await eventually(
        async () => (await api(t, 'GET', `/v1/transfers/${id}`)).data,
        (tr) => tr.status !== 'processing',
      );
      // The built-in simulated rails would name a `sim_…` reference; the adapter's is the transfer id.
      expect(transfer).toMatchObject({ status: 'settled', rail_reference: id });
      const callbacks = await t.db.store.query('SELECT path FROM rail_callbacks WHERE transfer_id = $1', [
        id,
      ]);
      expect(callbacks.map((c) => c.path)).toEqual([`b2b/result/${id}`]);
    }
    await expectLedgerHealthy(t);
  });
});
