/**
 * Flutterwave bank payouts and bank deposits through the service, over real HTTP both ways: the rail worker
 * resolves the account and sends the transfer to the Flutterwave simulator, whose signed webhooks come back to
 * the organization’s callback address. A payout settles or fails once whatever arrives twice, late, out of
 * order (a contradicting result is an exception, no money moves), forged or not at all (then polling finds
 * it); an account that does not resolve, or resolves to another name, fails
 * before anything is sent; a bank transfer into a wallet's virtual account number credits that wallet once.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRailCreditVerificationWorkerOnce } from '../src/modules/railPartners/useCases/creditVerificationWorker.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  type FlutterwaveSimulator,
  startFlutterwaveSimulator,
} from '../src/simulators/flutterwave/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

/** Long enough for the rail worker to record the transfer's reference before its webhook comes. */
const TEST_PROCESSING_MS = 300;
/** Past every poll interval: the rail worker asks about every payout still processing. */
const LATER_MS = 10 * 60_000;
const { resolvesAndSucceeds, unresolvable, transferFails, staysPending } = FLUTTERWAVE_SIMULATOR_ACCOUNTS;

interface StoredCallback {
  path: string;
  status: string;
  detail: string | null;
  transfer: string | null;
  body: string;
}

describe.each(BACKENDS)('Flutterwave on %s', (backend) => {
  let t: TestApp;
  let sim: FlutterwaveSimulator;
  let org: TestOrganization;
  let callbackUrl: string;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFlutterwaveSimulator({ processingMs: TEST_PROCESSING_MS });
    org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'flutterwave',
        settings: { base_url: sim.url },
        credentials: { secret_key: sim.credentials.secretKey, secret_hash: sim.credentials.secretHash },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({ partner: 'flutterwave', rail: 'bank', network: null });
    callbackUrl = created.data.callback_url as string;
    sim.setWebhookUrl(`${callbackUrl}/webhooks`);
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await sim?.close();
    await t?.close();
  });

  const railWork = () =>
    runRailWorkerOnce(t.deps, (transfer) => railPartnerDirectory(t.deps).forTransfer(transfer));
  const transferOf = async (id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key: org.key })).data;
  const callbacksOf = async (transfer: string) =>
    (await api(t, 'GET', `/v1/rail-callbacks?transfer=${transfer}&limit=100`, { key: org.key })).data
      .data as StoredCallback[];
  const allCallbacks = async () =>
    (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[];

  const verifyDeposits = () => runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
  const verifiesOf = (charge: number) =>
    sim.requests.filter((request) => request.path === `/v3/transactions/${charge}/verify`);
  const exceptionsOf = async (charge: number) =>
    (
      (await api(t, 'GET', '/v1/reconciliation/exceptions?status=open&limit=100', { key: org.key })).data
        .data as { kind: string; details: Record<string, string | null> }[]
    ).filter((e) => e.details.partner_transaction_id === String(charge));

  const BVN = '22123456789';
  const accountRequestsFor = (reference: string) =>
    sim.requests.filter(
      (request) => request.path === '/v3/virtual-account-numbers' && request.body.includes(reference),
    );

  /** An NGN wallet and the Flutterwave virtual account number it was given through the API. */
  async function walletWithAccountNumber(): Promise<{ wallet: string; accountNumber: string }> {
    const wallet = await fundedWallet(t, '0', 'NGN', org.key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, {
      key: org.key,
      body: { bvn: BVN, email: 'holder@example.com' },
    });
    expect(made.statusCode, made.body).toBe(201);
    return { wallet, accountNumber: made.data.account_number as string };
  }

  /** A bank payout of 1,500.00 KES from a funded wallet, submitted by the rail worker. */
  async function payout(accountNumber: string, accountName?: string) {
    const wallet = await fundedWallet(t, '10000.00', 'KES', org.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: {
        source: wallet,
        destination: {
          type: 'bank_account',
          bank_code: '044',
          account_number: accountNumber,
          ...(accountName === undefined ? {} : { account_name: accountName }),
        },
        amount: '1500.00',
        currency: 'KES',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    await railWork();
    return { id, wallet, flutterwave: sim.transfers().find((transfer) => transfer.reference === id) };
  }

  it('pays a resolved bank account once: settled by its webhook, a repeat of it changes nothing', async () => {
    const { id, wallet, flutterwave } = await payout(resolvesAndSucceeds.accountNumber, 'BRIGHT pastor');
    expect(flutterwave).toMatchObject({
      amount: 1500,
      currency: 'KES',
      account_number: resolvesAndSucceeds.accountNumber,
    });
    expect((await transferOf(id)).rail_reference).toBe(String(flutterwave?.id));
    await sim.waitForWebhooks({ id: flutterwave?.id });
    expect(await transferOf(id)).toMatchObject({ status: 'settled' });
    await sim.resendTransferWebhook(flutterwave?.id ?? 0);
    await railWork();
    // A repeat of the same bytes is a duplicate (linked to no transfer): found by the body naming the payout.
    const about = (await allCallbacks()).filter((callback) => callback.body.includes(id));
    expect(about.map((callback) => callback.status).sort()).toEqual(['applied', 'duplicate']);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('8500.00');
    expect(sim.transfers().filter((transfer) => transfer.reference === id)).toHaveLength(1);
    // Out of order: a genuine-looking FAILED after the payout settled moves no money; it is an exception.
    const [settling] = sim.webhooks.filter((delivery) => delivery.id === flutterwave?.id);
    const contradicting = JSON.parse(settling?.body ?? '{}');
    contradicting.data.status = 'FAILED';
    const late = await fetch(settling?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'verif-hash': sim.credentials.secretHash },
      body: JSON.stringify(contradicting),
    });
    expect(late.status).toBe(200);
    expect((await callbacksOf(id)).map((callback) => callback.status).sort()).toEqual([
      'applied',
      'exception',
    ]);
    expect(await transferOf(id)).toMatchObject({ status: 'settled' });
    expect((await balanceOf(t, wallet, org.key)).available).toBe('8500.00');
    await expectLedgerHealthy(t);
  });

  it('fails a payout Flutterwave reports FAILED, and gives the money back once', async () => {
    const { id, wallet, flutterwave } = await payout(transferFails.accountNumber);
    await sim.waitForWebhooks({ id: flutterwave?.id });
    expect(await transferOf(id)).toMatchObject({ status: 'failed', failure_code: 'partner_rejected' });
    await sim.resendTransferWebhook(flutterwave?.id ?? 0);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('10000.00');
    await expectLedgerHealthy(t);
  });

  it('fails at once, sending nothing, for an account that does not resolve or resolves to another name', async () => {
    const unknown = await payout(unresolvable.accountNumber);
    expect(await transferOf(unknown.id)).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_account_not_found',
    });
    expect(unknown.flutterwave).toBeUndefined();
    const mismatch = await payout(resolvesAndSucceeds.accountNumber, 'Somebody Else');
    expect(await transferOf(mismatch.id)).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_name_mismatch',
    });
    expect(mismatch.flutterwave).toBeUndefined();
    expect((await balanceOf(t, mismatch.wallet, org.key)).available).toBe('10000.00');
  });

  it('recovers a missing webhook by polling; the late webhook then changes nothing', async () => {
    sim.loseWebhooks(true);
    const { id, wallet, flutterwave } = await payout(resolvesAndSucceeds.accountNumber);
    const pending = await payout(staysPending.accountNumber);
    await sim.whenIdle();
    expect(await transferOf(id)).toMatchObject({ status: 'processing' });
    sim.loseWebhooks(false);
    t.deps.now = () => new Date(Date.now() + LATER_MS);
    try {
      await railWork();
    } finally {
      t.deps.now = realNow;
    }
    expect(await transferOf(id)).toMatchObject({ status: 'settled' });
    expect(await transferOf(pending.id)).toMatchObject({ status: 'processing' });
    await sim.resendTransferWebhook(flutterwave?.id ?? 0);
    expect((await callbacksOf(id)).map((callback) => callback.status)).toEqual(['unchanged']);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('8500.00');
    await expectLedgerHealthy(t);
  });

  it('refuses a forged webhook (wrong verif-hash, no signature) and stores it as such', async () => {
    sim.loseWebhooks(true);
    const { id, flutterwave } = await payout(resolvesAndSucceeds.accountNumber);
    await sim.whenIdle();
    sim.loseWebhooks(false);
    const lost = sim.webhooks.find((delivery) => delivery.id === flutterwave?.id);
    const forged = await fetch(`${callbackUrl}/transfers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'verif-hash': 'not-the-secret-hash' },
      body: lost?.body,
    });
    expect(forged.status).toBe(400);
    expect(await transferOf(id)).toMatchObject({ status: 'processing' });
    const stored = (await allCallbacks()).find((callback) => callback.body === lost?.body);
    expect(stored).toMatchObject({ status: 'malformed', detail: expect.stringContaining('forged') });
    expect(JSON.stringify(stored)).not.toContain(sim.credentials.secretHash);
  });

  it('credits a bank transfer into a wallet’s virtual account number to that wallet, once', async () => {
    const { wallet, accountNumber } = await walletWithAccountNumber();
    const charge = await sim.payIntoVirtualAccount({
      accountNumber,
      amount: 2500.5,
      payerName: 'Chidi Eze',
    });
    const [delivery] = await sim.waitForWebhooks({ id: charge.id });
    expect(delivery, JSON.stringify(delivery)).toMatchObject({ status: 200 });
    // Held until Flutterwave's verify vouches for it.
    expect((await balanceOf(t, wallet, org.key)).available).toBe('0.00');
    await verifyDeposits();
    expect(verifiesOf(charge.id)).toHaveLength(1);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('2500.50');
    // The same webhook again (same bytes), and the same charge re-sent with other bytes: nothing twice.
    await fetch(delivery?.url ?? '', { method: 'POST', headers: delivery?.headers, body: delivery?.body });
    const reworded = JSON.stringify({ ...JSON.parse(delivery?.body ?? '{}'), resent: true });
    await fetch(delivery?.url ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'verif-hash': sim.credentials.secretHash },
      body: reworded,
    });
    const statuses = (await allCallbacks())
      .filter((callback) => callback.body.includes(`"id":${charge.id}`))
      .map((callback) => callback.status)
      .sort();
    expect(statuses).toEqual(['applied', 'duplicate', 'unchanged']);
    await verifyDeposits();
    expect(verifiesOf(charge.id)).toHaveLength(1);
    expect((await balanceOf(t, wallet, org.key)).available).toBe('2500.50');
    await expectLedgerHealthy(t);
  });

  it.each([
    ['amount', { amount: 9000 }, 'amount_minor'],
    ['status', { status: 'failed' as const }, 'did not complete'],
    ['currency', { currency: 'KES' }, 'amount_minor none'],
  ])(
    'credits nothing when the verify answer disagrees (%s), and opens an exception',
    async (_, changes, why) => {
      const { wallet, accountNumber } = await walletWithAccountNumber();
      const charge = await sim.payIntoVirtualAccount({ accountNumber, amount: 900 });
      await sim.waitForWebhooks({ id: charge.id });
      sim.amendCharge(charge.id, changes);
      await verifyDeposits();
      await verifyDeposits();
      expect(verifiesOf(charge.id)).toHaveLength(1);
      expect((await balanceOf(t, wallet, org.key)).available).toBe('0.00');
      const [exception, ...others] = await exceptionsOf(charge.id);
      expect(others).toEqual([]);
      expect(exception).toMatchObject({
        kind: 'unmatched_callback',
        details: { reason: 'unverified_credit' },
      });
      expect(exception?.details.detail).toContain(why);
      await expectLedgerHealthy(t);
    },
  );

  it('gives an NGN wallet its Flutterwave account number once: a retry asks Flutterwave nothing, the BVN is never echoed', async () => {
    const wallet = await fundedWallet(t, '0', 'NGN', org.key);
    const path = `/v1/wallets/${wallet}/virtual-account`;
    const withoutBvn = await api(t, 'POST', path, { key: org.key, body: { email: 'holder@example.com' } });
    expect(withoutBvn.statusCode, withoutBvn.body).toBe(422);
    expect(withoutBvn.data).toMatchObject({ code: 'validation_error', param: 'bvn' });
    const badBvn = await api(t, 'POST', path, { key: org.key, body: { bvn: '123', email: 'h@example.com' } });
    expect(badBvn.data).toMatchObject({ code: 'validation_error', param: 'bvn' });
    expect(badBvn.body).not.toContain('123"');
    const noEmail = await api(t, 'POST', path, { key: org.key, body: { bvn: BVN } });
    expect(noEmail.data).toMatchObject({ code: 'validation_error', param: 'email' });

    const made = await api(t, 'POST', path, {
      key: org.key,
      body: { bvn: BVN, email: 'holder@example.com' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const reference = made.data.reference as string;
    const [issued] = sim.virtualAccounts().filter((a) => a.account_number === made.data.account_number);
    expect(made.data).toEqual({
      object: 'virtual_account',
      wallet,
      reference,
      created_at: expect.any(String),
      account_number: issued?.account_number,
      bank_name: issued?.bank_name,
      partner: 'flutterwave',
    });
    expect(JSON.parse(accountRequestsFor(reference)[0]?.body ?? '{}')).toMatchObject({
      tx_ref: reference,
      is_permanent: true,
      bvn: BVN,
      currency: 'NGN',
    });
    // Again, without and with the BVN, and with an Idempotency-Key twice: the same account, no second request.
    const again = await api(t, 'POST', path, { key: org.key });
    const keyed = {
      key: org.key,
      body: { bvn: BVN, email: 'holder@example.com' },
      headers: { 'idempotency-key': `va-${wallet}` },
    };
    const first = await api(t, 'POST', path, keyed);
    const replayed = await api(t, 'POST', path, keyed);
    for (const answer of [again, first, replayed]) {
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.data).toEqual(made.data);
    }
    expect(accountRequestsFor(reference)).toHaveLength(1);
    for (const answer of [made, again, first, replayed, withoutBvn, noEmail])
      expect(answer.body).not.toContain(BVN);
    const read = await api(t, 'GET', path, { key: org.key });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.data).toEqual(made.data);
    expect(read.body).not.toContain(BVN);
  });

  it('answers a wallet Flutterwave issues no account for (KES) with its reference alone, as before', async () => {
    const wallet = await fundedWallet(t, '0', 'KES', org.key);
    const requests = sim.requests.length;
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, { key: org.key });
    expect(made.statusCode, made.body).toBe(201);
    expect(Object.keys(made.data).sort()).toEqual(['created_at', 'object', 'reference', 'wallet']);
    expect(sim.requests.length).toBe(requests);
  });

  it('records nothing when Flutterwave cannot be reached (503 rail_unavailable); asking again issues one account', async () => {
    const wallet = await fundedWallet(t, '0', 'NGN', org.key);
    const path = `/v1/wallets/${wallet}/virtual-account`;
    const holder = { bvn: BVN, email: 'holder@example.com' };
    sim.failNext(1, 503);
    const refused = await api(t, 'POST', path, { key: org.key, body: holder });
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.data).toMatchObject({ code: 'rail_unavailable' });
    expect(refused.body).not.toContain(BVN);
    const made = await api(t, 'POST', path, { key: org.key, body: holder });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.data.account_number).toEqual(expect.any(String));
    const issued = sim.virtualAccounts().filter((a) => a.account_number === made.data.account_number);
    expect(issued).toHaveLength(1);
  });
});
