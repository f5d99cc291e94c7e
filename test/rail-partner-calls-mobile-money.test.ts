/**
 * The call log for the mobile-money partners, through the service against their simulators as real HTTP
 * servers: M-Pesa Daraja's token, B2C payout and Transaction Status query, and a 503; MTN MoMo's token,
 * account-holder check, transfer and its status, a 503 and a request that never answers (a time-out).
 * No token, key, password or phone number in any row.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DARAJA_SIMULATOR_DEFAULT_CREDENTIALS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { type MomoSimulator, startMomoSimulator } from '../src/simulators/mtnMomo/index.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';
import { type PartnerCall as Call, partnerCallsOf, partnerRailWork } from './support/partnerCalls.ts';

const DARAJA = { settles: '+254700000000', neverCompletes: '+254700000003', busy: '+254700000014' };
const MOMO = { settles: '+256770000000', busy: '+256770000011', hangs: '+256770000012' };

describe.each(BACKENDS)('Mobile-money partner calls on %s', (backend) => {
  let t: TestApp;
  let daraja: DarajaSimulator;
  let momo: MomoSimulator;
  let mpesaOrg: TestOrganization;
  let mtnOrg: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    daraja = await startDarajaSimulator();
    momo = await startMomoSimulator();
    mpesaOrg = await newOrganization(t);
    await configureSimulatedDaraja(t, mpesaOrg.key, daraja);
    mtnOrg = await newOrganization(t);
    const configured = await api(t, 'POST', '/v1/rail-partners', {
      key: mtnOrg.key,
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
  });
  afterAll(async () => {
    await daraja?.close();
    await momo?.close();
    await t?.close();
  });

  const work = () => partnerRailWork(t);
  const dueNow = (id: string) =>
    t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]);
  const callsOf = (key: string, transfer: string) => partnerCallsOf(t, key, `transfer_id=${transfer}`);
  async function payout(org: TestOrganization, network: 'mpesa' | 'mtn', phone: string): Promise<string> {
    const currency = network === 'mpesa' ? 'KES' : 'UGX';
    const wallet = await fundedWallet(t, '100000', currency, org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: { type: 'mobile_money', network, phone },
        amount: '1500',
        currency,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  it('records Daraja’s token, B2C payout and Transaction Status query', async () => {
    const id = await payout(mpesaOrg, 'mpesa', DARAJA.neverCompletes);
    await work();
    await dueNow(id);
    await work();
    const calls = await callsOf(mpesaOrg.key, id);
    expect(calls.map((call) => call.operation)).toEqual(['token', 'payout_submit', 'payout_status']);
    expect(calls[0]).toMatchObject({ partner: 'mpesa_daraja', path: '/oauth/v1/generate', http_status: 200 });
    expect(calls[1]).toMatchObject({
      path: '/mpesa/b2c/v3/paymentrequest',
      our_reference: id,
      partner_reference: expect.any(String),
      partner_code: '0',
      status: 'answered',
    });
    expect(calls[2]).toMatchObject({
      path: '/mpesa/transactionstatus/v1/query',
      our_reference: id,
      status: 'answered',
      http_status: 200,
    });
  });

  it('records Daraja’s refusal with its HTTP status and error code', async () => {
    const id = await payout(mpesaOrg, 'mpesa', DARAJA.busy);
    await work();
    const submits = (await callsOf(mpesaOrg.key, id)).filter((call) => call.operation === 'payout_submit');
    expect(submits[0]).toMatchObject({ status: 'answered', http_status: 503, partner_code: '500.003.02' });
  });

  it('records MoMo’s token, account check, transfer and its status', async () => {
    const id = await payout(mtnOrg, 'mtn', MOMO.settles);
    await work();
    await momo.whenIdle();
    await dueNow(id);
    await work();
    const calls = await callsOf(mtnOrg.key, id);
    const operations = calls.map((call) => call.operation);
    expect(operations).toContain('token');
    expect(operations).toContain('payout_submit');
    expect(operations).toContain('payout_status');
    const check = calls.find((call) => call.operation === 'account_holder_check');
    expect(check?.path).toMatch(/^\/disbursement\/v1_0\/accountholder\/msisdn\/2567•+00\/active$/);
    expect(calls.find((call) => call.operation === 'payout_submit')).toMatchObject({
      partner: 'mtn_momo',
      method: 'POST',
      path: '/disbursement/v1_0/transfer',
      our_reference: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'answered',
      http_status: 202,
    });
    await expectLedgerHealthy(t);
  });

  it('records MoMo’s 503 and a request that never answers as a time-out', async () => {
    const busy = await payout(mtnOrg, 'mtn', MOMO.busy);
    const hangs = await payout(mtnOrg, 'mtn', MOMO.hangs);
    await work();
    const busySubmit = (await callsOf(mtnOrg.key, busy)).find((call) => call.operation === 'payout_submit');
    expect(busySubmit).toMatchObject({ status: 'answered', http_status: 503 });
    const hangSubmit = (await callsOf(mtnOrg.key, hangs)).find((call) => call.operation === 'payout_submit');
    expect(hangSubmit).toMatchObject({ status: 'timeout', failure: 'timeout', http_status: null });
  });

  it('keeps no token, key, password or phone number in any row', async () => {
    const rows = await t.db.store.query<Call>('SELECT * FROM rail_partner_calls');
    expect(rows.length).toBeGreaterThan(0);
    const stored = JSON.stringify(rows);
    const credentials = DARAJA_SIMULATOR_DEFAULT_CREDENTIALS;
    for (const secret of [
      credentials.consumerKey,
      credentials.consumerSecret,
      credentials.securityCredential.slice(0, 24),
      credentials.passkey,
      momo.credentials.apiKey,
      momo.credentials.collectionSubscriptionKey,
      momo.credentials.disbursementSubscriptionKey,
      'Bearer',
      'Basic',
      '254700000003',
      '256770000000',
    ]) {
      expect(stored).not.toContain(secret);
    }
  });
});
