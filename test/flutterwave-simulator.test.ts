/**
 * The Flutterwave simulator against the rows of docs/rails/flutterwave.md: each endpoint, field, error and
 * webhook, over real HTTP, first with plain requests, then with Flutterwave's official Node client
 * (`flutterwave-node-v3`, pinned), unmodified, given nothing but the simulator's URL as its base URL.
 */
import https from 'node:https';
import Flutterwave from 'flutterwave-node-v3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS,
  type FlutterwaveSimulator,
  startFlutterwaveSimulator,
  verifyFlutterwaveWebhook,
} from '../src/simulators/flutterwave/index.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

let sim: FlutterwaveSimulator;
let dashboard: Receiver;
let callbacks: Receiver;

beforeAll(async () => {
  dashboard = await startReceiver('/flutterwave');
  callbacks = await startReceiver('/transfer-callbacks');
  sim = await startFlutterwaveSimulator({ processingMs: 5, webhookUrl: dashboard.url });
});

afterAll(async () => {
  await sim?.close();
  await dashboard?.close();
  await callbacks?.close();
});

afterEach(async () => {
  await sim.whenIdle();
  dashboard.respond = () => ({ status: 200 });
});

async function call(method: string, path: string, body?: unknown, secretKey = sim.credentials.secretKey) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** Nothing listens on port 1 on loopback: a connection there is refused at once. */
const CLOSED_PORT = 1;

const { resolvesAndSucceeds, unresolvable, transferFails, staysPending } = FLUTTERWAVE_SIMULATOR_ACCOUNTS;

const transferTo = (accountNumber: string, reference: string, extra: Record<string, unknown> = {}) => ({
  account_bank: '044',
  account_number: accountNumber,
  amount: 5500,
  currency: 'NGN',
  narration: 'Payout',
  reference,
  callback_url: callbacks.url,
  debit_currency: 'NGN',
  ...extra,
});

const webhookHeaders = (headers: Record<string, string | string[] | undefined>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));

describe('authentication and errors', () => {
  it('refuses a missing or wrong secret key with the error envelope', async () => {
    const wrong = await call('GET', '/v3/banks/NG', undefined, 'FLWSECK_TEST-wrong');
    expect(wrong).toEqual({
      status: 401,
      body: { status: 'error', message: expect.any(String), data: null },
    });
    const missing = await fetch(`${sim.url}/v3/banks/NG`);
    expect(missing.status).toBe(401);
  });

  it('answers an unknown path 404 and a forced outage 503, both in the error envelope', async () => {
    expect((await call('GET', '/v3/nothing-here')).status).toBe(404);
    sim.failNext(1, 503);
    expect(await call('GET', '/v3/banks/NG')).toMatchObject({ status: 503, body: { status: 'error' } });
  });

  it('refuses a body that is not JSON', async () => {
    const response = await fetch(`${sim.url}/v3/transfers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${sim.credentials.secretKey}` },
      body: '{not json',
    });
    expect(response.status).toBe(400);
  });
});

describe('POST /v3/transfers and GET /v3/transfers/{id}', () => {
  it('queues a transfer NEW, settles it SUCCESSFUL and reports it once to callback_url, signed', async () => {
    const created = await call(
      'POST',
      '/v3/transfers',
      transferTo(resolvesAndSucceeds.accountNumber, 'tr-ok-1'),
    );
    expect(created).toMatchObject({
      status: 200,
      body: {
        status: 'success',
        message: 'Transfer Queued Successfully',
        data: { status: 'NEW', reference: 'tr-ok-1', amount: 5500, currency: 'NGN', bank_code: '044' },
      },
    });
    const id = created.body.data.id as number;
    const [webhook] = await sim.waitForWebhooks({ id });
    expect(webhook?.url).toBe(callbacks.url);
    const arrived = callbacks.received.find((entry) => JSON.parse(entry.body).data.id === id);
    expect(arrived).toBeDefined();
    const payload = JSON.parse(arrived?.body ?? '{}');
    expect(payload).toMatchObject({
      event: 'transfer.completed',
      'event.type': 'Transfer',
      data: {
        id,
        status: 'SUCCESSFUL',
        reference: 'tr-ok-1',
        fullname: 'Pastor Bright',
        complete_message: expect.any(String),
      },
    });
    expect(
      verifyFlutterwaveWebhook(
        sim.credentials.secretHash,
        webhookHeaders(arrived?.headers ?? {}),
        arrived?.body ?? '',
      ),
    ).toBe(true);
    expect(await call('GET', `/v3/transfers/${id}`)).toMatchObject({
      status: 200,
      body: { data: { id, status: 'SUCCESSFUL' } },
    });
  });

  it('refuses a reference already used: the reference is the idempotency key', async () => {
    expect(
      (await call('POST', '/v3/transfers', transferTo(resolvesAndSucceeds.accountNumber, 'tr-dup'))).status,
    ).toBe(200);
    const again = await call(
      'POST',
      '/v3/transfers',
      transferTo(resolvesAndSucceeds.accountNumber, 'tr-dup'),
    );
    expect(again).toMatchObject({ status: 400, body: { status: 'error', data: null } });
    expect(sim.transfers().filter((transfer) => transfer.reference === 'tr-dup')).toHaveLength(1);
  });

  it('fails a transfer to the failing account, with complete_message, reported to the dashboard URL without callback_url', async () => {
    const created = await call(
      'POST',
      '/v3/transfers',
      transferTo(transferFails.accountNumber, 'tr-fail', { callback_url: undefined }),
    );
    const id = created.body.data.id as number;
    const [webhook] = await sim.waitForWebhooks({ id });
    expect(webhook?.url).toBe(dashboard.url);
    expect(JSON.parse(webhook?.body ?? '{}').data).toMatchObject({
      status: 'FAILED',
      complete_message: transferFails.behaviour.completeMessage,
    });
  });

  it('leaves a transfer to the pending account PENDING and sends no webhook: only polling sees it', async () => {
    const created = await call('POST', '/v3/transfers', transferTo(staysPending.accountNumber, 'tr-pending'));
    const id = created.body.data.id as number;
    await sim.whenIdle();
    expect(sim.webhooks.filter((delivery) => delivery.id === id)).toEqual([]);
    expect((await call('GET', `/v3/transfers/${id}`)).body.data.status).toBe('PENDING');
  });

  it('refuses each missing or malformed required field with 400', async () => {
    const base = transferTo(resolvesAndSucceeds.accountNumber, 'tr-invalid');
    for (const broken of [
      { ...base, amount: -1 },
      { ...base, amount: 'lots' },
      { ...base, currency: 'naira' },
      { ...base, account_bank: undefined },
      { ...base, account_number: undefined },
      { ...base, narration: 'x'.repeat(101) },
      { ...base, reference: 'r'.repeat(101) },
    ]) {
      expect(await call('POST', '/v3/transfers', broken)).toMatchObject({
        status: 400,
        body: { status: 'error' },
      });
    }
    expect(sim.transfers().some((transfer) => transfer.reference === 'tr-invalid')).toBe(false);
  });

  it('answers an unknown transfer id 404', async () => {
    expect(await call('GET', '/v3/transfers/1')).toMatchObject({ status: 404, body: { status: 'error' } });
  });

  it('lists transfers filtered by reference', async () => {
    await call('POST', '/v3/transfers', transferTo(resolvesAndSucceeds.accountNumber, 'tr-listed'));
    const listed = await call('GET', '/v3/transfers?reference=tr-listed');
    expect(listed.body).toMatchObject({ status: 'success', meta: { page_info: { total: 1 } } });
    expect(listed.body.data.map((transfer: { reference: string }) => transfer.reference)).toEqual([
      'tr-listed',
    ]);
  });

  it('sends a webhook the receiver does not answer 200 again, and can resend one on demand', async () => {
    let refusals = 1;
    dashboard.respond = () => (refusals-- > 0 ? { status: 500 } : { status: 200 });
    const created = await call(
      'POST',
      '/v3/transfers',
      transferTo(resolvesAndSucceeds.accountNumber, 'tr-retry', { callback_url: undefined }),
    );
    const id = created.body.data.id as number;
    const deliveries = await sim.waitForWebhooks({ id, count: 2 });
    expect(deliveries.map((delivery) => delivery.status)).toEqual([500, 200]);
    await sim.resendTransferWebhook(id);
    expect(sim.webhooks.filter((delivery) => delivery.id === id)).toHaveLength(3);
  });
});

describe('mobile-money transfers (POST /v3/transfers with an operator code)', () => {
  const mobileTo = (number: string, reference: string, extra: Record<string, unknown> = {}) => ({
    account_bank: 'MTN',
    account_number: number,
    amount: 15000,
    currency: 'UGX',
    beneficiary_name: 'Achieng Okello',
    reference,
    callback_url: callbacks.url,
    ...extra,
  });

  it('pays a wallet SUCCESSFUL and reports it; a wallet ending 0041 FAILED; one ending 0042 stays PENDING', async () => {
    const paid = await call('POST', '/v3/transfers', mobileTo('256770000001', 'mm-ok'));
    expect(paid).toMatchObject({
      status: 200,
      body: { status: 'success', data: { status: 'NEW', bank_code: 'MTN', account_number: '256770000001' } },
    });
    const [delivered] = await sim.waitForWebhooks({ id: paid.body.data.id });
    expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({
      event: 'transfer.completed',
      data: { status: 'SUCCESSFUL', reference: 'mm-ok', fullname: 'Achieng Okello' },
    });
    const failed = await call(
      'POST',
      '/v3/transfers',
      mobileTo(`25677000${FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS.fails}`, 'mm-fail'),
    );
    await sim.waitForWebhooks({ id: failed.body.data.id });
    expect(sim.transfer(failed.body.data.id)).toMatchObject({
      status: 'FAILED',
      complete_message: expect.stringContaining('DISBURSE FAILED'),
    });
    const pending = await call(
      'POST',
      '/v3/transfers',
      mobileTo(`25677000${FLUTTERWAVE_SIMULATOR_WALLET_ENDINGS.staysPending}`, 'mm-pending'),
    );
    await sim.whenIdle();
    expect(sim.transfer(pending.body.data.id)?.status).toBe('PENDING');
    expect(sim.webhooks.some((delivery) => delivery.id === pending.body.data.id)).toBe(false);
  });

  it('refuses an operator not listed for the currency, a number without its country code, no beneficiary_name, and M-Pesa Kenya without the sender in meta', async () => {
    const refusals = [
      mobileTo('256770000001', 'mm-r1', { account_bank: 'MPS' }),
      mobileTo('770000001', 'mm-r2'),
      mobileTo('256770000001', 'mm-r3', { beneficiary_name: undefined }),
      mobileTo('254712000001', 'mm-r4', { account_bank: 'MPS', currency: 'KES' }),
      mobileTo('254712000001', 'mm-r5', {
        account_bank: 'MPS',
        currency: 'KES',
        meta: { sender: 'Mkoba Ltd', sender_country: 'KE' },
      }),
    ];
    for (const body of refusals) {
      expect(await call('POST', '/v3/transfers', body)).toMatchObject({
        status: 400,
        body: { status: 'error', data: null },
      });
    }
    expect(sim.transfers().filter((transfer) => transfer.reference.startsWith('mm-r'))).toHaveLength(0);
    const kenya = await call(
      'POST',
      '/v3/transfers',
      mobileTo('254712000001', 'mm-ke', {
        account_bank: 'MPS',
        currency: 'KES',
        meta: { sender: 'Mkoba Ltd', sender_country: 'KE', mobile_number: '254700000000' },
      }),
    );
    expect(kenya).toMatchObject({ status: 200, body: { data: { bank_code: 'MPS', currency: 'KES' } } });
  });
});

describe('webhook verification', () => {
  it('accepts the verif-hash or the body signature, and refuses a wrong hash or a changed body', async () => {
    const body = '{"event":"transfer.completed"}';
    const hash = sim.credentials.secretHash;
    expect(verifyFlutterwaveWebhook(hash, { 'verif-hash': hash }, body)).toBe(true);
    expect(verifyFlutterwaveWebhook(hash, { 'verif-hash': 'forged' }, body)).toBe(false);
    expect(verifyFlutterwaveWebhook(hash, {}, body)).toBe(false);
    const created = await call(
      'POST',
      '/v3/transfers',
      transferTo(resolvesAndSucceeds.accountNumber, 'tr-signed'),
    );
    const [delivery] = await sim.waitForWebhooks({ id: created.body.data.id });
    const signature = delivery?.headers['flutterwave-signature'];
    expect(verifyFlutterwaveWebhook(hash, { 'flutterwave-signature': signature }, delivery?.body ?? '')).toBe(
      true,
    );
    expect(verifyFlutterwaveWebhook(hash, { 'flutterwave-signature': signature }, `${delivery?.body} `)).toBe(
      false,
    );
  });
});

describe('POST /v3/accounts/resolve and GET /v3/banks/{country}', () => {
  it('resolves an account to its name and refuses one that does not resolve', async () => {
    const resolved = await call('POST', '/v3/accounts/resolve', {
      account_number: resolvesAndSucceeds.accountNumber,
      account_bank: '044',
    });
    expect(resolved).toMatchObject({
      status: 200,
      body: {
        status: 'success',
        data: { account_number: resolvesAndSucceeds.accountNumber, account_name: 'Pastor Bright' },
      },
    });
    const refused = await call('POST', '/v3/accounts/resolve', {
      account_number: unresolvable.accountNumber,
      account_bank: '044',
    });
    expect(refused).toMatchObject({ status: 400, body: { status: 'error', data: null } });
    expect((await call('POST', '/v3/accounts/resolve', { account_bank: '044' })).status).toBe(400);
  });

  it('lists a country’s banks and refuses an unknown country', async () => {
    const banks = await call('GET', '/v3/banks/NG');
    expect(banks.body.data).toContainEqual({ id: expect.any(Number), code: '044', name: 'Access Bank' });
    expect((await call('GET', '/v3/banks/ZZ')).status).toBe(400);
  });
});

describe('virtual account numbers and charge.completed', () => {
  it('creates a static account (BVN required), reads it by order_ref, answers a repeated tx_ref with the same account', async () => {
    const withoutBvn = await call('POST', '/v3/virtual-account-numbers', {
      email: 'a@example.com',
      is_permanent: true,
      tx_ref: 'va-1',
    });
    expect(withoutBvn).toMatchObject({ status: 400, body: { status: 'error' } });
    const fields = {
      email: 'a@example.com',
      is_permanent: true,
      bvn: '12345678901',
      tx_ref: 'va-1',
      firstname: 'Ada',
      lastname: 'Obi',
    };
    const created = await call('POST', '/v3/virtual-account-numbers', fields);
    expect(created).toMatchObject({
      status: 200,
      body: {
        status: 'success',
        message: 'Virtual account created',
        data: {
          response_code: '02',
          account_number: expect.stringMatching(/^\d{10}$/),
          order_ref: expect.any(String),
          frequency: 'N/A',
        },
      },
    });
    const again = await call('POST', '/v3/virtual-account-numbers', fields);
    expect(again.body.data.account_number).toBe(created.body.data.account_number);
    const read = await call('GET', `/v3/virtual-account-numbers/${created.body.data.order_ref}`);
    expect(read.body.data).toEqual(created.body.data);
    expect((await call('GET', '/v3/virtual-account-numbers/URF_unknown')).status).toBe(404);
  });

  it('creates a dynamic account only with an amount', async () => {
    expect(
      (await call('POST', '/v3/virtual-account-numbers', { email: 'b@example.com', tx_ref: 'va-dyn' }))
        .status,
    ).toBe(400);
    const created = await call('POST', '/v3/virtual-account-numbers', {
      email: 'b@example.com',
      tx_ref: 'va-dyn',
      amount: 100,
    });
    expect(created.body.data).toMatchObject({ frequency: 1, amount: '100.00' });
  });

  it('reports a bank transfer into a virtual account by charge.completed to the dashboard URL, and verifies it; a charge amended answers as amended', async () => {
    const created = await call('POST', '/v3/virtual-account-numbers', {
      email: 'c@example.com',
      is_permanent: true,
      bvn: '12345678901',
      tx_ref: 'va-pay',
    });
    const charge = await sim.payIntoVirtualAccount({
      accountNumber: created.body.data.account_number,
      amount: 2500,
      payerName: 'Chidi Eze',
    });
    const [delivery] = await sim.waitForWebhooks({ id: charge.id });
    expect(delivery?.url).toBe(dashboard.url);
    expect(JSON.parse(delivery?.body ?? '{}')).toMatchObject({
      event: 'charge.completed',
      data: {
        id: charge.id,
        tx_ref: 'va-pay',
        amount: 2500,
        currency: 'NGN',
        status: 'successful',
        payment_type: 'bank_transfer',
      },
    });
    expect(
      verifyFlutterwaveWebhook(sim.credentials.secretHash, delivery?.headers ?? {}, delivery?.body ?? ''),
    ).toBe(true);
    expect(await call('GET', `/v3/transactions/${charge.id}/verify`)).toMatchObject({
      status: 200,
      body: { data: { id: charge.id, status: 'successful', amount: 2500 } },
    });
    expect((await call('GET', '/v3/transactions/1/verify')).status).toBe(400);
    sim.amendCharge(charge.id, { amount: 9000, status: 'failed' });
    expect(await call('GET', `/v3/transactions/${charge.id}/verify`)).toMatchObject({
      body: { data: { id: charge.id, status: 'failed', amount: 9000 } },
    });
    await expect(sim.payIntoVirtualAccount({ accountNumber: '0000000000', amount: 1 })).rejects.toThrow();
  });
});

describe('settlements', () => {
  it('settles the successful charges of a currency once, lists the settlement and reads it with its transactions', async () => {
    const made = await call('POST', '/v3/virtual-account-numbers', {
      email: 'settle@example.com',
      is_permanent: true,
      bvn: '12345678901',
      tx_ref: 'settle-va',
      currency: 'GHS',
    });
    const accountNumber = made.body.data.account_number as string;
    const first = await sim.payIntoVirtualAccount({ accountNumber, amount: 1000 });
    const second = await sim.payIntoVirtualAccount({ accountNumber, amount: 250.25 });
    const { settlement } = sim.settle({ currency: 'GHS', appFee: 1.4 });
    expect(settlement).toMatchObject({
      status: 'completed',
      currency: 'GHS',
      gross_amount: 1250.25,
      app_fee: 2.8,
      net_amount: 1247.45,
      transaction_count: 2,
      meta: [first.id, second.id],
    });
    expect(() => sim.settle({ currency: 'GHS' })).toThrow(/no GHS charge/);
    const listed = await call('GET', '/v3/settlements');
    expect(listed).toMatchObject({
      status: 200,
      body: { status: 'success', meta: { page_info: { current_page: 1 } } },
    });
    const summary = listed.body.data.find((entry: { id: number }) => entry.id === settlement.id);
    expect(summary).toMatchObject({ gross_amount: 1250.25 });
    expect(summary.transactions).toBeUndefined();
    const read = await call('GET', `/v3/settlements/${settlement.id}`);
    expect(read.body.data).toMatchObject({
      id: settlement.id,
      meta: JSON.stringify([first.id, second.id]),
      transactions: [
        {
          id: first.id,
          tx_ref: 'settle-va',
          charged_amount: 1000,
          app_fee: 1.4,
          settlement_amount: 998.6,
          status: 'successful',
          payment_entity: 'bank_transfer',
          transaction_date: first.created_at.slice(0, 10),
          currency: 'GHS',
        },
        { id: second.id, charged_amount: 250.25 },
      ],
    });
    expect(await call('GET', '/v3/settlements/999')).toMatchObject({
      status: 404,
      body: { status: 'error', data: null },
    });
  });
});

describe('flutterwave-node-v3 (npm), unmodified, with the simulator as its base URL', () => {
  let flw: Flutterwave;

  beforeAll(() => {
    // The client reports telemetry to Flutterwave's hosts over node:https when constructed and on each call;
    // the simulator speaks plain http, so every https request here is that telemetry. It is sent to a closed
    // local port instead: it never leaves, and the client sees the connection error it already handles.
    const request = https.request;
    vi.spyOn(https, 'request').mockImplementation(((_: unknown, callback?: () => void) =>
      request({ host: '127.0.0.1', port: CLOSED_PORT, method: 'POST' }, callback)) as typeof https.request);
    flw = new Flutterwave(sim.credentials.publicKey, sim.credentials.secretKey, `${sim.url}/`);
  });

  afterAll(() => {
    vi.restoreAllMocks();
  });

  it('initiates a transfer, reads it, and finds it by reference', async () => {
    const created = await flw.Transfer.initiate({
      account_bank: '044',
      account_number: resolvesAndSucceeds.accountNumber,
      amount: 200,
      narration: 'Client payout',
      currency: 'NGN',
      reference: 'client-tr-1',
      callback_url: callbacks.url,
      debit_currency: 'NGN',
    });
    expect(created).toMatchObject({ status: 'success', data: { status: 'NEW', reference: 'client-tr-1' } });
    await sim.waitForWebhooks({ id: created.data.id });
    expect(await flw.Transfer.get_a_transfer({ id: created.data.id })).toMatchObject({
      status: 'success',
      data: { id: created.data.id, status: 'SUCCESSFUL' },
    });
    const listed = await flw.Transfer.fetch({ reference: 'client-tr-1' });
    expect(listed.data.map((transfer: { id: number }) => transfer.id)).toEqual([created.data.id]);
  });

  it('initiates a mobile-money transfer (M-Pesa Kenya, sender in meta) and reads its outcome', async () => {
    const created = await flw.Transfer.initiate({
      account_bank: 'MPS',
      account_number: '254712000077',
      amount: 1200,
      currency: 'KES',
      beneficiary_name: 'Akinyi Kimwei',
      reference: 'client-mm-1',
      callback_url: callbacks.url,
      meta: { sender: 'Mkoba Ltd', sender_country: 'KE', mobile_number: '254700000000' },
    });
    expect(created).toMatchObject({ status: 'success', data: { status: 'NEW', bank_code: 'MPS' } });
    await sim.waitForWebhooks({ id: created.data.id });
    expect(await flw.Transfer.get_a_transfer({ id: created.data.id })).toMatchObject({
      data: { status: 'SUCCESSFUL', reference: 'client-mm-1' },
    });
    const again = await flw.Transfer.initiate({
      account_bank: 'MPS',
      account_number: '254712000077',
      amount: 1200,
      currency: 'KES',
      beneficiary_name: 'Akinyi Kimwei',
      reference: 'client-mm-1',
      meta: { sender: 'Mkoba Ltd', sender_country: 'KE', mobile_number: '254700000000' },
    });
    expect(again).toMatchObject({ status: 'error' });
  });

  it('lists settlements and reads one with its transactions', async () => {
    const all = await flw.Settlement.fetch_all();
    expect(all).toMatchObject({ status: 'success', data: expect.any(Array) });
    const [latest] = all.data;
    expect(latest).toMatchObject({ id: expect.any(Number), currency: 'GHS' });
    const one = await flw.Settlement.fetch({ id: String(latest.id) });
    expect(one).toMatchObject({
      status: 'success',
      data: { id: latest.id, transactions: expect.any(Array) },
    });
  });

  it('resolves an account, lists banks, creates a virtual account and verifies a deposit', async () => {
    expect(
      await flw.Misc.verify_Account({
        account_number: resolvesAndSucceeds.accountNumber,
        account_bank: '044',
      }),
    ).toMatchObject({
      status: 'success',
      data: { account_name: 'Pastor Bright' },
    });
    expect(
      await flw.Misc.verify_Account({ account_number: unresolvable.accountNumber, account_bank: '044' }),
    ).toMatchObject({
      status: 'error',
    });
    expect((await flw.Bank.country({ country: 'NG' })).data.length).toBeGreaterThan(0);
    const account = await flw.VirtualAcct.create({
      email: 'd@example.com',
      is_permanent: true,
      bvn: '12345678901',
      tx_ref: 'client-va',
    });
    expect(account).toMatchObject({ status: 'success', data: { account_number: expect.any(String) } });
    const charge = await sim.payIntoVirtualAccount({
      accountNumber: account.data.account_number,
      amount: 900,
    });
    expect(await flw.Transaction.verify({ id: charge.id })).toMatchObject({
      status: 'success',
      data: { amount: 900 },
    });
  });
});
