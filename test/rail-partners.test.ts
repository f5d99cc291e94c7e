/**
 * Rail partners through the service: an organization configures M-Pesa (Daraja) over the API, payouts go
 * out through the adapter to the Daraja simulator (a real HTTP server), and its callbacks come back over
 * real HTTP to the service's callback address, where they are stored, then applied once. Duplicates,
 * malformed bodies, unknown and contradicting callbacks, a failing partner (paused, nothing lost) and a
 * rail nobody carries are each tested; the ledger verifies after.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import type { Deps } from '../src/app/deps.ts';
import { missingMasterKeys } from '../src/app/secretsAtRest.ts';
import { keyringOf, MASTER_KEY_BYTES } from '../src/domain/sealing.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { PARTNER_RAIL_FACTORIES } from '../src/modules/railPartners/partners/factories.ts';
import { RAIL_CALLBACK_MATCH_GRACE_MS } from '../src/modules/railPartners/useCases/callbacks.ts';
import {
  RAIL_PARTNER_CALLS_BEFORE_PAUSE,
  RailPartnerDirectory,
  railPartnerDirectory,
} from '../src/modules/railPartners/useCases/directory.ts';
import { ensureSimulatedRailPartner } from '../src/modules/railPartners/useCases/partners.ts';
import { runRailCallbackSweepOnce } from '../src/modules/railPartners/workers.ts';
import { fundWallet } from '../src/modules/transfers/useCases/railCredits.ts';
import { RAIL_NOT_CONFIGURED_FAILURE, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** How long the pause lasts in the circuit-breaker test. */
const TEST_PAUSE_MS = 3_000;
const SECRET = 'consumer-secret-never-shown';

describe.each(BACKENDS)('rail partners on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startDarajaSimulator({ lateCallbackDelayMs: 60_000 });
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await sim?.close();
    await t?.close();
  });

  const darajaBody = (overrides: Record<string, unknown> = {}) => ({
    partner: 'mpesa_daraja',
    settings: {
      base_url: sim.url,
      short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.shortCode,
      initiator_name: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.initiatorName,
      stk_short_code: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.stkShortCode,
    },
    credentials: {
      consumer_key: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerKey,
      consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret,
      security_credential: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.securityCredential,
      passkey: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.passkey,
    },
    ...overrides,
  });

  /** A new organization with Daraja configured and a funded KES wallet. */
  async function configured(): Promise<{ org: TestOrganization; wallet: string; partner: string }> {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', { key: org.key, body: darajaBody() });
    expect(created.statusCode, created.body).toBe(201);
    const wallet = await fundedWallet(t, '1000.00', 'KES', org.key);
    return { org, wallet, partner: created.data.id };
  }

  const work = () =>
    runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));

  async function payout(key: string, wallet: string, phone: string, amount = '10.00') {
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination: mobileMoney(phone), amount, currency: 'KES' },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  const transferOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
  const callbacksOf = async (key: string, transfer: string) =>
    (await api(t, 'GET', `/v1/rail-callbacks?transfer=${transfer}`, { key })).data.data as {
      status: string;
    }[];

  it('configures a partner: credentials sealed and never shown, one per rail and network, for admins', async () => {
    const org = await newOrganization(t);
    const writer = (await issueApiKey(t.deps, { organizationName: org.name, scopes: ['read', 'write'] })).key;
    expect((await api(t, 'POST', '/v1/rail-partners', { key: writer, body: darajaBody() })).statusCode).toBe(
      403,
    );
    const missing = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: darajaBody({ credentials: { consumer_key: 'k' } }),
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.data.param).toMatch(/^credentials\./);
    const insecure = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: darajaBody({ settings: { ...darajaBody().settings, base_url: 'ftp://example.com' } }),
    });
    expect(insecure.data.param).toBe('settings.base_url');
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: darajaBody({ credentials: { ...darajaBody().credentials, consumer_secret: SECRET } }),
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({
      object: 'rail_partner',
      partner: 'mpesa_daraja',
      rail: 'mobile_money',
      network: 'mpesa',
      status: 'active',
      credentials: ['consumer_key', 'consumer_secret', 'passkey', 'security_credential'],
    });
    expect(created.data.callback_url).toMatch(/\/v1\/rails\/mobile_money\/callbacks\/[A-Za-z0-9_-]{43}$/);
    expect(created.body).not.toContain(SECRET);
    const again = await api(t, 'POST', '/v1/rail-partners', { key: org.key, body: darajaBody() });
    expect(again.statusCode).toBe(409);
    expect(again.data.code).toBe('rail_partner_exists');
    const rotated = await api(t, 'PATCH', `/v1/rail-partners/${created.data.id}`, {
      key: org.key,
      body: { credentials: { consumer_secret: DARAJA_SIMULATOR_DEFAULT_CREDENTIALS.consumerSecret } },
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const evidence = await api(t, 'GET', '/v1/evidence?kind=rail_partner.update', { key: org.key });
    expect(evidence.data.data).toHaveLength(2);
    expect(JSON.stringify(evidence.data.data)).not.toContain(SECRET);
    expect(evidence.data.data[0].data).toMatchObject({ credentials_changed: ['consumer_secret'] });
    const stored = await t.db.store.query(
      'SELECT sealed_credentials FROM rail_partner_configs WHERE id = $1',
      [created.data.id],
    );
    expect(String(stored[0]?.sealed_credentials)).not.toContain(SECRET);
    const disabled = await api(t, 'PATCH', `/v1/rail-partners/${created.data.id}`, {
      key: org.key,
      body: { status: 'disabled' },
    });
    expect(disabled.data.status).toBe('disabled');
    expect((await api(t, 'POST', '/v1/rail-partners', { key: org.key, body: darajaBody() })).statusCode).toBe(
      201,
    );
    const listed = await api(t, 'GET', '/v1/rail-partners', { key: org.key });
    expect(listed.data.data).toHaveLength(2);
  });

  it('two servers starting at once point the sandbox partner at a simulator once: one configuration, no conflict', async () => {
    const org = await newOrganization(t);
    const simulated = (baseUrl: string) =>
      ensureSimulatedRailPartner(t.deps, org.organizationId, {
        ...darajaBody(),
        partner: 'mpesa_daraja',
        settings: { ...darajaBody().settings, base_url: baseUrl },
      });
    for (let round = 0; round < 4; round += 1) {
      const port = 40_000 + round;
      const both = await Promise.all([
        simulated(`http://127.0.0.1:${port}`),
        simulated(`http://127.0.0.1:${port + 100}`),
      ]);
      expect(both.every((config) => config?.partner === 'mpesa_daraja')).toBe(true);
    }
    const listed = await api(t, 'GET', '/v1/rail-partners', { key: org.key });
    expect(listed.data.data).toHaveLength(1);
    expect(listed.data.data[0].status).toBe('active');
  });

  it('rotating the master key re-wraps partner credentials: the partner is called with them under the new key alone', async () => {
    const { org, wallet, partner } = await configured();
    const oldKey = t.deps.keyring.current;
    if (!oldKey) throw new Error('the test app has no master key');
    const replacement = new Uint8Array(randomBytes(MASTER_KEY_BYTES));
    const rotating: Deps = { ...t.deps, keyring: keyringOf(replacement, [oldKey.bytes]) };
    const result = await runAdminCommand(rotating, { name: 'encryption.rewrap' });
    if (result.name !== 'encryption.rewrap') throw new Error('unexpected result');
    expect(result.railPartnerCredentials).toBeGreaterThanOrEqual(1);
    const rotated: Deps = { ...t.deps, keyring: keyringOf(replacement) };
    expect(await missingMasterKeys(rotated)).toEqual([]);
    const id = await payout(org.key, wallet, '+254700000000');
    const directory = new RailPartnerDirectory(rotated, PARTNER_RAIL_FACTORIES);
    try {
      const paymentsBefore = sim.payments.length;
      await runRailWorkerOnce(rotated, (tr) => directory.forTransfer(tr));
      // Submitted with the credentials opened under the new key alone.
      expect(sim.payments.length).toBe(paymentsBefore + 1);
      expect((await transferOf(org.key, id)).rail_reference).toBe(id);
    } finally {
      directory.close();
      // Back to the app's own key for the tests after this one.
      await runAdminCommand(
        { ...t.deps, keyring: keyringOf(oldKey.bytes, [replacement]) },
        { name: 'encryption.rewrap' },
      );
    }
    expect(partner).toMatch(/^rp_/);
  });

  it('pays out through the partner, and its callback settles or fails the transfer once', async () => {
    const { org, wallet } = await configured();
    const paid = await payout(org.key, wallet, '+254700000000');
    const refused = await payout(org.key, wallet, '+254700000001');
    const twice = await payout(org.key, wallet, '+254700000010');
    await work();
    await sim.idle();
    const settled = await eventually(
      () => transferOf(org.key, paid),
      (tr) => tr.status === 'settled',
    );
    expect(settled).toMatchObject({ status: 'settled', rail_reference: paid });
    const failed = await eventually(
      () => transferOf(org.key, refused),
      (tr) => tr.status === 'failed',
    );
    expect(failed).toMatchObject({ status: 'failed', failure_code: 'recipient_not_registered' });
    expect((await callbacksOf(org.key, paid)).map((c) => c.status)).toEqual(['applied']);
    // The repeated callback: stored too, as a duplicate that changed nothing.
    const all = await eventually(
      async () =>
        (await api(t, 'GET', '/v1/rail-callbacks', { key: org.key })).data.data as { status: string }[],
      (list) => list.length === 4,
    );
    expect(all.map((c) => c.status).sort()).toEqual(['applied', 'applied', 'applied', 'duplicate']);
    expect((await transferOf(org.key, twice)).status).toBe('settled');
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}/balance`, { key: org.key });
    expect(balance.data.available).toBe('980.00');
    await expectLedgerHealthy(t);
  });

  it('a callback that settles the payout while the worker is still at the partner wins once; the worker keeps it', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org.key, wallet, '+254700000000');
    const directory = railPartnerDirectory(t.deps);
    // The partner's callback is applied before the worker has recorded the partner's answer.
    await runRailWorkerOnce(t.deps, async (tr) => {
      const rail = await directory.forTransfer(tr);
      if (!rail) return undefined;
      return {
        call: rail.call,
        adapter: {
          check: (transfer, now) => rail.adapter.check(transfer, now),
          async submit(request, now) {
            const answer = await rail.adapter.submit(request, now);
            await sim.idle();
            await eventually(
              () => transferOf(org.key, id),
              (tr) => tr.status === 'settled',
            );
            return answer;
          },
        },
      };
    });
    expect(await transferOf(org.key, id)).toMatchObject({ status: 'settled', rail_reference: id });
    const events = await api(t, 'GET', `/v1/events?type=transfer.settled&limit=100`, { key: org.key });
    expect(
      events.data.data.filter((e: { data: { transfer_id: string } }) => e.data.transfer_id === id),
    ).toHaveLength(1);
    expect((await callbacksOf(org.key, id)).map((c) => c.status)).toEqual(['applied']);
    await expectLedgerHealthy(t);
  });

  it('stores a malformed callback and answers 400; the status query settles the transfer instead', async () => {
    const { org, wallet } = await configured();
    const id = await payout(org.key, wallet, '+254700000012');
    await work();
    await sim.idle();
    const malformed = await eventually(
      () => api(t, 'GET', '/v1/rail-callbacks?status=malformed', { key: org.key }),
      (r) => r.data.data.length === 1,
    );
    expect(malformed.data.data).toHaveLength(1);
    await sim.idle();
    const refusedDeliveries = await eventually(
      async () => sim.deliveries.filter((d) => d.status === 400),
      (list) => list.length === 1,
    );
    expect(refusedDeliveries).toHaveLength(1);
    expect((await transferOf(org.key, id)).status).toBe('processing');
    // The next check asks Daraja for the payout's status; the answer comes back as a callback.
    await t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]);
    await work();
    await sim.idle();
    await sim.deliverPendingCallbacks();
    const settled = await eventually(
      () => transferOf(org.key, id),
      (tr) => tr.status === 'settled',
    );
    expect(settled.status).toBe('settled');
    await expectLedgerHealthy(t);
  });

  it('a callback for a payout nobody made, or contradicting a final one, goes to the exception queue', async () => {
    const { org, wallet, partner } = await configured();
    const paid = await payout(org.key, wallet, '+254700000000');
    await work();
    await sim.idle();
    await eventually(
      () => transferOf(org.key, paid),
      (tr) => tr.status === 'settled',
    );
    const config = (await api(t, 'GET', `/v1/rail-partners/${partner}`, { key: org.key })).data;
    const result = (originator: string, code: number) => ({
      Result: {
        ResultType: 0,
        ResultCode: code,
        ResultDesc: code === 0 ? 'The service request is processed successfully.' : 'Declined',
        OriginatorConversationID: originator,
        ConversationID: `AG_${originator}`,
        TransactionID: `TX${originator.slice(-6)}`,
      },
    });
    const post = (body: unknown) =>
      t.app.inject({
        method: 'POST',
        url: `${new URL(config.callback_url).pathname}/b2c/result`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    // A failure reported for a payout that settled.
    const late = await post(result(paid, 2040));
    expect(late.statusCode, late.body).toBe(200);
    expect(late.json().status).toBe('exception');
    expect(await transferOf(org.key, paid)).toMatchObject({ status: 'settled', ledger_state: 'exception' });
    // A result for an OriginatorConversationID we never sent: tried again for a while, then an exception.
    const unknown = await post(result('tr_00000000000000000000000000', 2040));
    expect(unknown.json().status).toBe('received');
    t.deps.now = () => new Date(Date.now() + RAIL_CALLBACK_MATCH_GRACE_MS + 1_000);
    try {
      await runRailCallbackSweepOnce(t.deps, railPartnerDirectory(t.deps));
    } finally {
      t.deps.now = realNow;
    }
    const open = (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open', { key: org.key })).data
      .data as {
      kind: string;
      transfer: string | null;
    }[];
    expect(open.map((e) => e.kind).sort()).toEqual(['late_callback', 'unmatched_callback']);
    expect(open.find((e) => e.kind === 'late_callback')?.transfer).toBe(paid);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/v1/rails/mobile_money/callbacks/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/b2c/result',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(bad.statusCode).toBe(404);
    expect(bad.json().code).toBe('callback_unknown');
    await expectLedgerHealthy(t);
  });

  it('pauses a failing partner: transfers wait (nothing lost), an event says so, and they go out once it answers', async () => {
    const { org, wallet, partner } = await configured();
    const ids: string[] = [];
    for (let i = 0; i < RAIL_PARTNER_CALLS_BEFORE_PAUSE + 2; i++) {
      ids.push(await payout(org.key, wallet, '+254700000000', '1.00'));
    }
    sim.failNext(RAIL_PARTNER_CALLS_BEFORE_PAUSE, 500);
    // A directory of its own, paused for a short time so the test sees it resume.
    const directory = new RailPartnerDirectory(t.deps, PARTNER_RAIL_FACTORIES, { pauseMs: TEST_PAUSE_MS });
    const pass = () =>
      runRailWorkerOnce(t.deps, (tr) => directory.forTransfer(tr), { concurrency: 1, log: () => {} });
    try {
      await pass();
      const reasons = await Promise.all(ids.map(async (id) => (await transferOf(org.key, id)).status_reason));
      expect(reasons.filter((r) => r === 'rail_unavailable')).toHaveLength(RAIL_PARTNER_CALLS_BEFORE_PAUSE);
      expect(reasons.filter((r) => r === 'rail_paused')).toHaveLength(2);
      const paused = await eventually(
        () => api(t, 'GET', '/v1/events?type=rail_partner.paused', { key: org.key }),
        (r) => r.data.data.length === 1,
      );
      expect(paused.data.data[0].data).toMatchObject({ rail_partner_id: partner, partner: 'mpesa_daraja' });
      for (const id of ids) expect((await transferOf(org.key, id)).status).toBe('processing');
      // Once the pause is over, one call tries the partner; it answers, so the circuit closes and the rest go.
      await new Promise((resolve) => setTimeout(resolve, TEST_PAUSE_MS + 50));
      await t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = ANY($1::text[])', [
        ids,
        new Date(),
      ]);
      await pass();
      await sim.idle();
      const resumed = await eventually(
        () => api(t, 'GET', '/v1/events?type=rail_partner.resumed', { key: org.key }),
        (r) => r.data.data.length === 1,
      );
      expect(resumed.data.data).toHaveLength(1);
      for (const id of ids) {
        expect(
          (
            await eventually(
              () => transferOf(org.key, id),
              (tr) => tr.status === 'settled',
            )
          ).status,
        ).toBe('settled');
      }
    } finally {
      directory.close();
    }
    await expectLedgerHealthy(t);
  });

  it('carries MTN numbers through MoMo beside M-Pesa: each network to its own partner', async () => {
    const momo = await startMomoSimulator();
    try {
      const { org, wallet } = await configured();
      const created = await api(t, 'POST', '/v1/rail-partners', {
        key: org.key,
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
      expect(created.statusCode, created.body).toBe(201);
      const ugx = await fundedWallet(t, '50000', 'UGX', org.key);
      const send = async (phone: string) =>
        (
          await api(t, 'POST', '/v1/transfers', {
            key: org.key,
            body: { source: ugx, destination: mobileMoney(phone, 'mtn'), amount: '1500', currency: 'UGX' },
          })
        ).data.id as string;
      const paid = await send('+256770000000');
      const refused = await send('+256770000001');
      const mpesa = await payout(org.key, wallet, '+254700000000');
      await work();
      await momo.whenIdle();
      await sim.idle();
      expect(
        (
          await eventually(
            () => transferOf(org.key, paid),
            (tr) => tr.status === 'settled',
          )
        ).status,
      ).toBe('settled');
      expect(
        await eventually(
          () => transferOf(org.key, refused),
          (tr) => tr.status === 'failed',
        ),
      ).toMatchObject({ status: 'failed', failure_code: 'recipient_not_registered' });
      expect(
        (
          await eventually(
            () => transferOf(org.key, mpesa),
            (tr) => tr.status === 'settled',
          )
        ).status,
      ).toBe('settled');
      expect(momo.resources('disbursement')).toHaveLength(2);
      const balance = await api(t, 'GET', `/v1/wallets/${ugx}/balance`, { key: org.key });
      expect(balance.data).toMatchObject({ available: '48500', pending: '0' });
      await expectLedgerHealthy(t);
    } finally {
      await momo.close();
    }
  });

  it('in production a rail no partner carries fails the transfer rail_not_configured, its hold released', async () => {
    const prod = await startTestApp(backend, 'production');
    try {
      const org = await newOrganization(prod);
      const owner = await api(prod, 'POST', '/v1/customers', {
        key: org.key,
        body: { type: 'individual', name: 'Asha' },
      });
      const wallet = await api(prod, 'POST', '/v1/wallets', {
        key: org.key,
        body: { owner: owner.data.id, currency: 'KES' },
      });
      await prod.deps.store.transaction((tx) =>
        fundWallet(tx, prod.deps, org.organizationId, wallet.data.id, '50.00', {}),
      );
      const id = (
        await api(prod, 'POST', '/v1/transfers', {
          key: org.key,
          body: {
            source: wallet.data.id,
            destination: mobileMoney('+254711000001'),
            amount: '5.00',
            currency: 'KES',
          },
        })
      ).data.id;
      await runRailWorkerOnce(prod.deps, (tr) => railPartnerDirectory(prod.deps).forTransfer(tr));
      expect((await api(prod, 'GET', `/v1/transfers/${id}`, { key: org.key })).data).toMatchObject({
        status: 'failed',
        failure_code: RAIL_NOT_CONFIGURED_FAILURE,
      });
      const balance = await api(prod, 'GET', `/v1/wallets/${wallet.data.id}/balance`, { key: org.key });
      expect(balance.data).toMatchObject({ available: '50.00', pending: '0.00' });
    } finally {
      await prod.close();
    }
  });
});
