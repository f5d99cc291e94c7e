/**
 * Money sent into the sandbox from outside through its partner simulators: `POST /v1/sandbox/bank-transfers`
 * pays a wallet's Flutterwave account number, and `POST /v1/sandbox/chain/deposits` to an address Fireblocks
 * issued goes through the Fireblocks simulator; either way the wallet is credited by the partner's webhook
 * (and Flutterwave's verification) over real HTTP, as in production, never by the route itself.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_CLAIM_LEASE_MS } from '../src/app/idempotencyClaims.ts';
import { requestFingerprint } from '../src/domain/idempotency.ts';
import { runCustodyDepositPollOnce } from '../src/modules/railPartners/custodyWorkers.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailCreditVerificationWorkerOnce } from '../src/modules/railPartners/workers.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import type { RunningPartnerSimulators } from '../src/partnerSimulators.ts';
import { startSandboxSimulators } from '../src/railWork.ts';
import { insertIdempotencyClaim } from '../src/store/repositories/idempotency.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

/** Identical requests sent at once with one Idempotency-Key. */
const RACERS = 8;

describe.each(BACKENDS)('the sandbox’s partner feeds on %s', (backend) => {
  let t: TestApp;
  let sims: RunningPartnerSimulators;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    // As `mkoba serve` does in the sandbox: partners' webhooks come to the address it listens on.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sims = await startSandboxSimulators(t.deps, () => {});
  });
  afterAll(async () => {
    await sims?.stop();
    await t?.close();
  });

  const post = (path: string, body: object, key?: string) =>
    api(t, 'POST', path, { body, headers: key ? { 'idempotency-key': key } : {} });

  async function ngnWalletWithAccount(): Promise<{ wallet: string; accountNumber: string }> {
    const wallet = await fundedWallet(t, '0', 'NGN');
    const made = await post(`/v1/wallets/${wallet}/virtual-account`, {
      bvn: '22123456789',
      email: 'holder@example.com',
    });
    expect(made.statusCode, made.body).toBe(201);
    return { wallet, accountNumber: made.data.account_number };
  }

  async function usdcDepositAddress(): Promise<{ wallet: string; address: string }> {
    const wallet = await fundedWallet(t, '0', 'USDC');
    const issued = await post(`/v1/wallets/${wallet}/deposit-addresses`, { network: 'ethereum' });
    expect(issued.statusCode, issued.body).toBe(201);
    return { wallet, address: issued.data.address };
  }

  it('credits a bank transfer into a wallet’s account number through Flutterwave’s webhook and verification', async () => {
    const { wallet, accountNumber } = await ngnWalletWithAccount();
    const body = { wallet, amount: '2500.50', currency: 'NGN', sender_name: 'Ada Obi' };
    const sent = await post('/v1/sandbox/bank-transfers', body, 'bank-transfer-1');
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.data).toEqual({
      object: 'sandbox_bank_transfer',
      partner: 'flutterwave',
      partner_reference: expect.stringMatching(/^\d+$/),
      wallet,
      account_number: accountNumber,
      amount: '2500.50',
      currency: 'NGN',
      sender_name: 'Ada Obi',
    });
    // The same key again is the same transfer: answered from the record, not sent twice.
    const again = await post('/v1/sandbox/bank-transfers', body, 'bank-transfer-1');
    expect(again.statusCode).toBe(202);
    expect(again.data).toEqual(sent.data);
    const id = Number(sent.data.partner_reference);
    const deliveries = await sims.flutterwave.waitForWebhooks({ id });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ status: 200 });
    expect(JSON.parse(deliveries[0]?.body ?? '{}').data).toMatchObject({ narration: 'Ada Obi' });
    // Credited only once Flutterwave's verification confirms it, as in production.
    expect((await balanceOf(t, wallet)).available).toBe('0.00');
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    expect((await balanceOf(t, wallet)).available).toBe('2500.50');

    // Named by the account number alone.
    const byNumber = await post(
      '/v1/sandbox/bank-transfers',
      { account_number: accountNumber, amount: 100, currency: 'NGN' },
      'bank-transfer-2',
    );
    expect(byNumber.statusCode, byNumber.body).toBe(202);
    expect(byNumber.data).toMatchObject({ wallet, amount: '100.00', sender_name: null });
    await sims.flutterwave.waitForWebhooks({ id: Number(byNumber.data.partner_reference) });
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    expect((await balanceOf(t, wallet)).available).toBe('2600.50');
    await expectLedgerHealthy(t);
  });

  /**
   * Fires RACERS identical requests with one new key at once: one sends and is answered 202; each other is
   * a replay of that answer or the 409 in flight (never a second send, never another answer).
   */
  async function race(path: string, body: object, key: string) {
    const answers = await Promise.all(Array.from({ length: RACERS }, () => post(path, body, key)));
    const sent = answers.filter((a) => a.statusCode === 202 && a.headers['idempotent-replayed'] !== 'true');
    expect(sent, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    for (const answer of answers) {
      if (answer.statusCode === 202) {
        expect(answer.data).toEqual(sent[0]?.data);
        continue;
      }
      expect(answer.statusCode, answer.body).toBe(409);
      expect(answer.data).toMatchObject({ code: 'idempotency_key_in_flight', param: 'Idempotency-Key' });
      expect(answer.headers['retry-after']).toBe('1');
    }
    // Once it is answered, the key replays that answer.
    const again = await post(path, body, key);
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.data).toEqual(sent[0]?.data);
    return sent[0]?.data as Record<string, string>;
  }

  it('sends a bank transfer once however many identical requests race with one key', async () => {
    const { wallet, accountNumber } = await ngnWalletWithAccount();
    const sent = await race(
      '/v1/sandbox/bank-transfers',
      { wallet, amount: '77.00', currency: 'NGN' },
      'bank-transfer-race',
    );
    await sims.flutterwave.waitForWebhooks({ id: Number(sent.partner_reference) });
    const charges = new Set(
      sims.flutterwave.webhooks
        .filter((w) => w.event === 'charge.completed')
        .map((w) => JSON.parse(w.body).data)
        .filter((charge) => String(charge.flw_ref).startsWith(`${accountNumber}-`))
        .map((charge) => charge.id),
    );
    expect([...charges]).toEqual([Number(sent.partner_reference)]);
  });

  it('sends a deposit to a Fireblocks address once however many identical requests race with one key', async () => {
    const { address } = await usdcDepositAddress();
    const sent = await race(
      '/v1/sandbox/chain/deposits',
      { network: 'ethereum', address, amount: '7.5' },
      'custody-deposit-race',
    );
    await sims.fireblocks.whenIdle();
    const transactions = new Set(
      sims.fireblocks.webhooks
        .filter((w) => w.type === 'TRANSACTION_CREATED' && w.body.includes(address))
        .map((w) => w.transactionId),
    );
    expect([...transactions]).toEqual([sent.partner_reference]);
  });

  it('holds a key a dead request claimed until its claim runs out, then sends once', async () => {
    const { wallet, accountNumber } = await ngnWalletWithAccount();
    const path = '/v1/sandbox/bank-transfers';
    const body = { wallet, amount: '5.00', currency: 'NGN' };
    const key = 'bank-transfer-orphaned-claim';
    // What a process that died between its claim and its send leaves behind.
    await insertIdempotencyClaim(t.deps.store, {
      organizationId: t.organizationId,
      key,
      fingerprint: requestFingerprint('POST', path, body),
      method: 'POST',
      path,
      responseStatus: 409,
      responseText: '{}',
      createdAt: new Date(),
      claimedUntil: new Date(Date.now() + IDEMPOTENCY_CLAIM_LEASE_MS),
    });
    const charges = () =>
      sims.flutterwave.webhooks.filter(
        (w) => w.event === 'charge.completed' && w.body.includes(`"${accountNumber}-`),
      ).length;
    const held = await post(path, body, key);
    expect(held.statusCode, held.body).toBe(409);
    expect(held.data.code).toBe('idempotency_key_in_flight');
    const other = await post(path, { ...body, amount: '6.00' }, key);
    expect(other.statusCode, other.body).toBe(422);
    expect(other.data.code).toBe('idempotency_key_reused');
    expect(charges()).toBe(0);
    await t.deps.store.query(
      "UPDATE idempotency_records SET claimed_until = now() - interval '1 second' WHERE idempotency_key = $1",
      [key],
    );
    const sent = await post(path, body, key);
    expect(sent.statusCode, sent.body).toBe(202);
    await sims.flutterwave.waitForWebhooks({ id: Number(sent.data.partner_reference) });
    expect(charges()).toBe(1);
    const [record] = await t.deps.store.query(
      'SELECT response_status, claimed_until FROM idempotency_records WHERE idempotency_key = $1',
      [key],
    );
    expect(record).toEqual({ response_status: 202, claimed_until: null });
  });

  it('refuses bad bank transfers with a problem naming the field, sending nothing', async () => {
    const { wallet, accountNumber } = await ngnWalletWithAccount();
    const kes = await fundedWallet(t, '0');
    const before = sims.flutterwave.webhooks.length;
    const cases: [object, number, string, string][] = [
      [{ amount: '1.00', currency: 'NGN' }, 400, 'wallet', 'required'],
      [{ wallet, amount: '1.001', currency: 'NGN' }, 400, 'amount', 'too_precise'],
      [{ wallet, amount: '0', currency: 'NGN' }, 400, 'amount', 'not_positive'],
      [{ wallet, amount: '1.00', currency: 'KES' }, 400, 'currency', 'currency_mismatch'],
      [{ wallet: kes, amount: '1.00', currency: 'KES' }, 400, 'wallet', 'no_account_number'],
      [
        { wallet: kes, account_number: accountNumber, amount: '1.00', currency: 'NGN' },
        400,
        'account_number',
        'mismatch',
      ],
      [
        { account_number: '7899999999', amount: '1.00', currency: 'NGN' },
        404,
        'account_number',
        'resource_missing',
      ],
      [
        { wallet: 'wallet_01m80v1f31hmw57sgkdkcnyxra', amount: '1.00', currency: 'NGN' },
        404,
        'wallet',
        'resource_missing',
      ],
    ];
    for (const [body, status, param, code] of cases) {
      const refused = await post('/v1/sandbox/bank-transfers', body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(status);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.data.param ?? refused.data.errors?.[0]?.param, refused.body).toBe(param);
      const codes = [refused.data.code, ...(refused.data.errors ?? []).map((e: { code: string }) => e.code)];
      expect(codes, refused.body).toContain(code);
    }
    const unknownField = await post('/v1/sandbox/bank-transfers', {
      wallet,
      amount: '1',
      currency: 'NGN',
      x: 1,
    });
    expect(unknownField.statusCode).toBe(400);
    expect(sims.flutterwave.webhooks.length).toBe(before);
  });

  it('sends a deposit to a Fireblocks address through the Fireblocks simulator, credited by its webhook', async () => {
    const { wallet, address } = await usdcDepositAddress();
    const sent = await post(
      '/v1/sandbox/chain/deposits',
      { network: 'ethereum', address, amount: '42.5' },
      'custody-deposit-1',
    );
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.data).toEqual({
      object: 'sandbox_custody_deposit',
      partner: 'fireblocks',
      partner_reference: expect.any(String),
      wallet,
      asset: 'USDC',
      network: 'ethereum',
      address,
      amount: '42.500000',
      tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const again = await post(
      '/v1/sandbox/chain/deposits',
      { network: 'ethereum', address, amount: '42.5' },
      'custody-deposit-1',
    );
    expect(again.data).toEqual(sent.data);
    expect(sims.fireblocks.transaction(sent.data.partner_reference)).toMatchObject({
      destinationAddress: address,
    });
    await sims.fireblocks.waitForStatus(sent.data.partner_reference, 'COMPLETED');
    await sims.fireblocks.whenIdle();
    const deposit = await eventually(
      async () => (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`)).data?.data?.[0],
      (found) => found !== undefined,
    );
    // Recorded from Fireblocks' report: its transaction on chain, not one the route made up.
    expect(deposit).toMatchObject({ tx_hash: sent.data.tx_hash, amount: '42.500000', address });
    await eventually(
      async () => {
        await runDepositWorkerOnce(t.deps, { log: () => {} });
        return (await balanceOf(t, wallet)).available;
      },
      (available) => available === '42.500000',
    );
    // The webhook brought it: the poll finds it recorded already and adds nothing.
    await runCustodyDepositPollOnce(t.deps, railPartnerDirectory(t.deps));
    await runDepositWorkerOnce(t.deps, { log: () => {} });
    expect((await balanceOf(t, wallet)).available).toBe('42.500000');
    await expectLedgerHealthy(t);
  });

  it('refuses what Fireblocks decides itself on a deposit to its address', async () => {
    const { address } = await usdcDepositAddress();
    for (const [field, value] of [
      ['tx_hash', `0x${'ab'.repeat(32)}`],
      ['log_index', 1],
      ['confirmations', 3],
    ] as const) {
      const refused = await post('/v1/sandbox/chain/deposits', {
        network: 'ethereum',
        address,
        amount: '1',
        [field]: value,
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.data.errors?.[0] ?? refused.data).toMatchObject({ param: field, code: 'not_supported' });
    }
    const tooPrecise = await post('/v1/sandbox/chain/deposits', {
      network: 'ethereum',
      address,
      amount: '1.0000001',
    });
    expect(tooPrecise.statusCode).toBe(400);
    expect(tooPrecise.data.errors?.[0] ?? tooPrecise.data).toMatchObject({
      param: 'amount',
      code: 'too_precise',
    });
  });

  // Last: the simulators stop.
  it('refuses both with sandbox_simulators_off once the simulators are off', async () => {
    const { wallet } = await ngnWalletWithAccount();
    const { address } = await usdcDepositAddress();
    await sims.stop();
    const bank = await post(
      '/v1/sandbox/bank-transfers',
      { wallet, amount: '1.00', currency: 'NGN' },
      'off-1',
    );
    const chain = await post(
      '/v1/sandbox/chain/deposits',
      { network: 'ethereum', address, amount: '1' },
      'off-2',
    );
    for (const refused of [bank, chain]) {
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.data).toMatchObject({
        code: 'sandbox_simulators_off',
        type: 'urn:mkoba:error:sandbox_simulators_off',
      });
    }
    // Nothing was sent, so nothing is kept under the keys (not even their claims): a retry may send.
    const kept = await t.deps.store.query(
      "SELECT idempotency_key FROM idempotency_records WHERE idempotency_key IN ('off-1', 'off-2')",
    );
    expect(kept).toEqual([]);
    expect(t.deps.sandboxPartnerFeeds).toBeUndefined();
  });
});

describe.each(BACKENDS)('a production deployment on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'production');
  });
  afterAll(() => t?.close());

  it('has no sandbox bank transfers', async () => {
    const refused = await api(t, 'POST', '/v1/sandbox/bank-transfers', {
      body: { account_number: '7800000001', amount: '1.00', currency: 'NGN' },
      headers: { 'idempotency-key': 'prod-1' },
    });
    expect(refused.statusCode).toBe(404);
    expect(refused.data.code).toBe('route_not_found');
  });
});
