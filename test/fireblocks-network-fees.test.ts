/**
 * Network fees of custody transactions, over real HTTP against the Fireblocks simulator: a `digital_asset`
 * payout's and a custody sweep's fee, reported by Fireblocks on COMPLETED (`feeInfo.networkFee` in
 * `feeCurrency`), is booked once. Paid in the network's native coin (ETH for USDC on Ethereum, as Fireblocks
 * pays every token transfer's gas), which the ledger keeps no account for, it opens one
 * `unbooked_network_fee` exception; paid in the stablecoin itself, it is posted through the posting module
 * (rail fee expense against the float it left). A webhook racing the poll, repeated and late webhooks book
 * nothing twice; the custody reserves read from Fireblocks then agree with the ledger's trust account. A
 * completed sweep later reported FAILED opens one `late_callback` exception and takes nothing back.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCustodySweepPassOnce } from '../src/modules/railPartners/custodyWorkers.ts';
import {
  type FireblocksConfig,
  fireblocksRequest,
} from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import { minorOfFireblocksAmount } from '../src/modules/railPartners/partners/fireblocks/protocol.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { payoutRailResolver } from '../src/railWork.ts';
import {
  type FireblocksSimulator,
  signWebhookBody,
  startFireblocksSimulator,
} from '../src/simulators/fireblocks/index.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const toPayee = { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE };
/** What the simulator charges each outgoing transaction in these tests: 0.000420 ETH (or USDC). */
const FEE = '0.00042';

describe.each(BACKENDS)('Fireblocks network fees on %s', (backend) => {
  let t: TestApp;
  let sim: FireblocksSimulator;
  let config: FireblocksConfig;
  let payoutVault: string;
  let callbackUrl: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFireblocksSimulator({ stepMs: 5, networkFee: FEE, tenantId: randomUUID() });
    config = {
      fetch: (url, init) => fetch(url, init as RequestInit),
      baseUrl: sim.baseUrl,
      apiKey: sim.credentials.apiKey,
      privateKey: sim.credentials.secretKey,
      webhookPublicKey: sim.webhookPublicKey,
      sourceVaultAccountId: '',
    };
    const vault = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'treasury' });
    payoutVault = (vault.body as { id: string }).id;
    config.sourceVaultAccountId = payoutVault;
    await fireblocksRequest(config, 'POST', `/vault/accounts/${payoutVault}/USDC`);
    sim.setBalance(payoutVault, 'USDC', '100000');
  });
  afterEach(() => sim.setNetworkFee(FEE));
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  /** A new organization with this Fireblocks as its custody partner and a funded USDC wallet. */
  async function configured() {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: payoutVault,
          webhook_public_key: sim.webhookPublicKey,
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    callbackUrl = `${created.data.callback_url}/webhook`;
    sim.setWebhookUrl(callbackUrl);
    const wallet = await fundedWallet(t, '500.000000', 'USDC', org.key);
    return { key: org.key, organizationId: org.organizationId, wallet, partner: created.data.id as string };
  }

  const work = () =>
    runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
      log: () => {},
    });
  async function send(key: string, wallet: string, amount: string) {
    const created = await api(t, 'POST', '/v1/transfers', {
      key,
      body: { source: wallet, destination: toPayee, amount, currency: 'USDC' },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }
  const settled = (key: string, id: string) =>
    eventually(
      async () => (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data,
      (tr) => tr.status === 'settled',
    );
  const feeExceptions = async (key: string) =>
    (await api(t, 'GET', '/v1/reconciliation/exceptions?kind=unbooked_network_fee', { key })).data
      .data as any[];
  const feesOf = async (subjectId: string) =>
    (await t.db.store.query('SELECT * FROM custody_network_fees WHERE subject_id = $1', [
      subjectId,
    ])) as Array<Record<string, any>>;
  const accountsOf = async (key: string, kind: string) =>
    (await api(t, 'GET', `/v1/ledger/accounts?kind=${kind}&currency=USDC`, { key })).data.data as any[];
  const railAccount = async (key: string, kind: string) =>
    (await accountsOf(key, kind)).find((a) => a.rail === 'digital_asset');
  const partnerTransaction = (transferId: string) =>
    fireblocksRequest(config, 'GET', `/transactions/external_tx_id/${transferId}`).then(
      (r) => r.body as Record<string, any>,
    );
  const vaultTotal = async (vault: string) =>
    minorOfFireblocksAmount(
      ((await fireblocksRequest(config, 'GET', `/vault/accounts/${vault}/USDC`)).body as { total: string })
        .total,
    ) as bigint;
  /** Fireblocks' COMPLETED webhook for a transaction, signed as the simulator signs its own. */
  async function completedWebhook(transaction: Record<string, unknown>) {
    const body = JSON.stringify({
      type: 'TRANSACTION_STATUS_UPDATED',
      tenantId: 'tenant',
      timestamp: Date.now(),
      data: transaction,
    });
    const answer = await fetch(callbackUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Fireblocks-Signature': signWebhookBody(body) },
      body,
    });
    expect(answer.status).toBe(200);
  }

  it('reports the fee field by field, in the native coin, once the transaction is on chain', async () => {
    const { key, wallet } = await configured();
    const id = await send(key, wallet, '10.000000');
    await work();
    await sim.whenIdle();
    const transaction = await partnerTransaction(id);
    expect(transaction).toMatchObject({
      status: 'COMPLETED',
      feeCurrency: 'ETH',
      feeInfo: { networkFee: FEE, serviceFee: '0', gasPrice: expect.any(String) },
      networkFee: 0.00042,
      networkRecords: [],
    });
  });

  it('a payout’s fee in the native coin opens one unbooked_network_fee exception, and changes no balance', async () => {
    const { key, wallet } = await configured();
    const id = await send(key, wallet, '25.500000');
    await work();
    await sim.whenIdle();
    await settled(key, id);
    const transaction = await partnerTransaction(id);
    const [exception, ...more] = await feeExceptions(key);
    expect(more).toEqual([]);
    expect(exception).toMatchObject({
      kind: 'unbooked_network_fee',
      status: 'open',
      transfer: null,
      details: {
        partner: 'fireblocks',
        partner_transaction_id: transaction.id,
        transfer_id: id,
        fee_asset: 'ETH',
        fee_amount: FEE,
      },
    });
    // The payout is right: it stays posted, not in exception.
    expect((await api(t, 'GET', `/v1/transfers/${id}`, { key })).data.ledger_state).toBe('posted');
    expect(await railAccount(key, 'rail_fee')).toBeUndefined();
    // A late webhook of the same COMPLETED transaction books nothing more.
    await completedWebhook(transaction);
    expect(await feeExceptions(key)).toHaveLength(1);
    expect(await feesOf(id)).toHaveLength(1);
    // Only a note resolves it: the fee is the organization's own coin, not a transfer's money.
    const refused = await api(t, 'POST', `/v1/reconciliation/exceptions/${exception.id}/resolve`, {
      key,
      body: { action: 'book_fee', note: 'gas' },
    });
    expect(refused.statusCode, refused.body).toBe(422);
    const resolved = await api(t, 'POST', `/v1/reconciliation/exceptions/${exception.id}/resolve`, {
      key,
      body: { action: 'manual_match', note: 'gas recorded in the fuel ledger' },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    await expectLedgerHealthy(t);
  });

  it('a webhook racing the poll, and repeated webhooks, book the fee once', async () => {
    const { key, wallet } = await configured();
    // 17.17: Fireblocks sends no webhook of its own; the test sends COMPLETED while the worker polls.
    const id = await send(key, wallet, '17.170000');
    await work();
    await sim.whenIdle();
    const transaction = await partnerTransaction(id);
    expect(transaction.status).toBe('COMPLETED');
    await t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]);
    await Promise.all([
      completedWebhook(transaction),
      work(),
      completedWebhook({ ...transaction, lastUpdated: transaction.lastUpdated + 1 }),
      work(),
    ]);
    await settled(key, id);
    await completedWebhook({ ...transaction, lastUpdated: transaction.lastUpdated + 2 });
    expect(await feesOf(id)).toHaveLength(1);
    expect((await feeExceptions(key)).filter((e) => e.details.transfer_id === id)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('a fee paid in the stablecoin is posted once: rail fee expense against the float it left', async () => {
    const { key, wallet } = await configured();
    sim.setNetworkFee('0.25', 'asset');
    const before = await vaultTotal(payoutVault);
    const id = await send(key, wallet, '40.000000');
    await work();
    await sim.whenIdle();
    await settled(key, id);
    const transaction = await partnerTransaction(id);
    expect(transaction).toMatchObject({ feeCurrency: 'USDC', feeInfo: { networkFee: '0.25' } });
    await completedWebhook(transaction);
    const [fee, ...more] = await feesOf(id);
    expect(more).toEqual([]);
    expect(fee).toMatchObject({ currency: 'USDC', fee_asset: 'USDC', exception_id: null });
    expect(await feeExceptions(key)).toEqual([]);
    expect(await railAccount(key, 'rail_fee')).toMatchObject({ net_posted: '-0.250000' });
    // The float lost the amount and the fee: the clearing account says both.
    expect(await railAccount(key, 'rail_clearing')).toMatchObject({ net_posted: '40.250000' });
    const entries = (await api(t, 'GET', '/v1/ledger/entries?limit=100', { key })).data.data as any[];
    const feeEntry = entries.find((e) => e.id === fee?.journal_entry_id);
    expect(feeEntry).toMatchObject({ kind: 'direct', transfer: null });
    expect(before - (await vaultTotal(payoutVault))).toBe(40_250000n);
    await expectLedgerHealthy(t);
  });

  it('attacker: a forged webhook books no fee, a later one with another fee books nothing more, the database refuses a second row', async () => {
    const { key, wallet } = await configured();
    // 19.19 stays BROADCASTING at Fireblocks: only a forged webhook could say it completed.
    const stuck = await send(key, wallet, '19.190000');
    await work();
    await sim.whenIdle();
    const pending = await partnerTransaction(stuck);
    const { privateKey: forger } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const body = JSON.stringify({
      type: 'TRANSACTION_STATUS_UPDATED',
      tenantId: 'tenant',
      timestamp: Date.now(),
      data: { ...pending, status: 'COMPLETED', feeCurrency: 'USDC', feeInfo: { networkFee: '400' } },
    });
    await fetch(callbackUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Fireblocks-Signature': signWebhookBody(
          body,
          forger.export({ type: 'pkcs8', format: 'pem' }) as string,
        ),
      },
      body,
    });
    expect((await api(t, 'GET', `/v1/transfers/${stuck}`, { key })).data.status).not.toBe('settled');
    expect(await feesOf(stuck)).toEqual([]);
    expect(await railAccount(key, 'rail_fee')).toBeUndefined();
    // A settled payout: a signed webhook telling another fee afterwards changes nothing.
    sim.setNetworkFee('0.1', 'asset');
    const id = await send(key, wallet, '30.000000');
    await work();
    await sim.whenIdle();
    await settled(key, id);
    const transaction = await partnerTransaction(id);
    await completedWebhook({ ...transaction, feeInfo: { networkFee: '250' } });
    const [fee] = await feesOf(id);
    expect(fee).toMatchObject({ fee_amount: '0.1' });
    expect(await railAccount(key, 'rail_fee')).toMatchObject({ net_posted: '-0.100000' });
    // Whoever writes to the database: one fee per partner transaction.
    await expect(
      t.db.store.query(
        `INSERT INTO custody_network_fees (id, organization_id, partner, partner_transaction_id, subject_type,
           subject_id, fee_asset, fee_amount, currency, amount_minor, journal_entry_id, exception_id, created_at)
         SELECT 'cnf_again', organization_id, partner, partner_transaction_id, subject_type, subject_id,
           fee_asset, fee_amount, currency, amount_minor, journal_entry_id, exception_id, created_at
           FROM custody_network_fees WHERE id = $1`,
        [fee?.id],
      ),
    ).rejects.toThrow(/unique|duplicate/i);
    await expectLedgerHealthy(t);
  });

  it('a completed sweep Fireblocks later reports FAILED opens one late_callback exception; what was booked stands', async () => {
    const { key } = await configured();
    const wallet = await fundedWallet(t, '0', 'USDC', key);
    const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
      key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const name = encodeURIComponent(`mkoba ${wallet}`);
    const found = await fireblocksRequest(config, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
    const vault = (found.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
    sim.deposit({ vaultAccountId: vault, assetId: 'USDC', amount: '30' });
    await sim.whenIdle();
    await eventually(
      async () => (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`, { key })).data.data as any[],
      (list) => list.length === 1,
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    for (let i = 0; i < 3; i++) {
      await runCustodySweepPassOnce(t.deps, railPartnerDirectory(t.deps));
      await sim.whenIdle();
    }
    const sweepsOf = () =>
      t.db.store.query(
        'SELECT id, status, partner_transaction_id, safeguarding_sweep_id FROM custody_sweeps WHERE vault_account_id = $1',
        [vault],
      ) as Promise<Array<Record<string, any>>>;
    const [sweep, ...others] = await sweepsOf();
    expect(others).toEqual([]);
    expect(sweep).toMatchObject({ status: 'completed', safeguarding_sweep_id: expect.any(String) });
    const trustBefore = (await accountsOf(key, 'trust'))[0]?.net_posted;
    const lateExceptions = async () =>
      (await api(t, 'GET', '/v1/reconciliation/exceptions?kind=late_callback', { key })).data.data as any[];
    expect(await lateExceptions()).toEqual([]);

    sim.changeCompletedStatus(sweep?.partner_transaction_id, 'FAILED', 'INTERNAL_ERROR');
    await sim.whenIdle();
    const exceptions = await eventually(lateExceptions, (list) => list.length === 1);
    expect(exceptions[0]).toMatchObject({
      kind: 'late_callback',
      status: 'open',
      transfer: null,
      details: {
        partner: 'fireblocks',
        direction: 'sweep',
        custody_sweep_id: sweep?.id,
        safeguarding_sweep_id: sweep?.safeguarding_sweep_id,
        partner_transaction_id: sweep?.partner_transaction_id,
        reported: 'failed',
        reported_status: 'FAILED',
        reported_sub_status: 'INTERNAL_ERROR',
        amount_minor: '30000000',
        currency: 'USDC',
      },
    });
    // The same webhook again is a duplicate: no second exception.
    const last = sim.webhooks.filter((w) => w.transactionId === sweep?.partner_transaction_id).at(-1);
    const again = await fetch(last?.url ?? '', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...last?.headers },
      body: last?.body,
    });
    expect(await again.json()).toMatchObject({ status: 'duplicate' });
    expect(await lateExceptions()).toHaveLength(1);
    // Nothing booked is taken back: the sweep, its trust ledger sweep and its one fee stand.
    expect(await sweepsOf()).toEqual([sweep]);
    expect((await accountsOf(key, 'trust'))[0]?.net_posted).toBe(trustBefore);
    expect(await feesOf(sweep?.id)).toHaveLength(1);

    // Attacker: another organization's Fireblocks webhook naming this sweep (signed, as a shared workspace
    // could send it) opens nothing, in either organization.
    const intruder = await configured();
    const transaction = (
      await fireblocksRequest(config, 'GET', `/transactions/${sweep?.partner_transaction_id}`)
    ).body as Record<string, unknown>;
    await completedWebhook({ ...transaction, status: 'CANCELLED', subStatus: 'CANCELLED_BY_USER' });
    const intruderExceptions = (
      await api(t, 'GET', '/v1/reconciliation/exceptions?kind=late_callback', { key: intruder.key })
    ).data.data as any[];
    expect(intruderExceptions).toEqual([]);
    expect(await lateExceptions()).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('sweeps and payouts paid fees; the custody reserves read from Fireblocks agree with the ledger’s trust', async () => {
    const { key, partner } = await configured();
    const wallets: Array<{ wallet: string; vault: string }> = [];
    // 9.5 is below the sweep minimum: it stays in its vault, in trust.
    for (const amount of ['60', '40.5', '9.5']) {
      const wallet = await fundedWallet(t, '0', 'USDC', key);
      const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
        key,
        body: { network: 'ethereum' },
      });
      expect(issued.statusCode, issued.body).toBe(201);
      const name = encodeURIComponent(`mkoba ${wallet}`);
      const found = await fireblocksRequest(config, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
      const vault = (found.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
      sim.deposit({ vaultAccountId: vault, assetId: 'USDC', amount });
      wallets.push({ wallet, vault });
    }
    await sim.whenIdle();
    await eventually(
      async () => (await api(t, 'GET', '/v1/deposits?status=pending', { key })).data.data as unknown[],
      (list) => list.length === 0,
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    const [first] = wallets;
    // A payout out of the first wallet's money, and a sweep of each vault, each paying its fee.
    const payout = await send(key, first?.wallet ?? '', '20.000000');
    await work();
    for (let i = 0; i < 3; i++) {
      await runCustodySweepPassOnce(t.deps, railPartnerDirectory(t.deps));
      await sim.whenIdle();
    }
    await settled(key, payout);
    const sweepFees = await t.db.store.query(
      "SELECT * FROM custody_network_fees WHERE subject_type = 'sweep' AND organization_id = (SELECT organization_id FROM transfers WHERE id = $1)",
      [payout],
    );
    expect(sweepFees).toHaveLength(2);
    expect(await feeExceptions(key)).toHaveLength(3);
    // What Fireblocks holds in the wallets' vaults is what the ledger's trust account says it holds.
    const read = await api(t, 'POST', `/v1/rail-partners/${partner}/balance-queries`, { key });
    expect(read.statusCode, read.body).toBe(201);
    const reserve = (read.data.accounts as any[])
      .filter((a) => a.currency === 'USDC')
      .reduce((sum, a) => sum + Number(a.current ?? a.available), 0);
    const trust = (await accountsOf(key, 'trust'))[0] ?? { net_posted: '0' };
    expect(-Number(trust.net_posted)).toBe(reserve);
    expect(reserve).toBe(9.5);
    await expectLedgerHealthy(t);
  });
});
