/**
 * Past 400 lines: every custody case (payouts, addresses, deposits, sweeps, crashes) shares one app and simulator.
 *
 * Custody through Fireblocks, payouts and deposit addresses: an organization configures Fireblocks as its custody partner
 * (API key and private key sealed like every partner's credentials), the rail worker sends each
 * `digital_asset` payout as a Fireblocks transaction with externalTxId = the transfer's id to the
 * Fireblocks simulator (a real HTTP server), and the simulator's signed webhooks come back over real HTTP to
 * the service's callback address. Completed, failed, cancelled, missing and repeated webhooks, a forged
 * one, and a retried submit (never a second transaction) are each tested; the ledger verifies after each.
 * Its wallets' deposit addresses are then their Fireblocks vault accounts' (one vault account per wallet,
 * also when two first requests race), and deposits are swept into the payout vault once, even across a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCustodyDepositPollOnce,
  runCustodySweepPassOnce,
} from '../src/modules/railPartners/custodyWorkers.ts';
import {
  type FireblocksConfig,
  fireblocksRequest,
} from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import { minorOfFireblocksAmount } from '../src/modules/railPartners/partners/fireblocks/protocol.ts';
import {
  type CustodyPartnerRail,
  fireblocksRail,
  parseFireblocksWebhook,
} from '../src/modules/railPartners/partners/fireblocks/rail.ts';
import {
  CUSTODY_SWEEP_RETRY_MAX_MS,
  CUSTODY_SWEEP_RETRY_MS,
  sweepRetryAfter,
} from '../src/modules/railPartners/useCases/custodySweeps.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { type RailResolver, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { MalformedCallbackError } from '../src/rails/partner.ts';
import { payoutRailResolver } from '../src/railWork.ts';
import {
  type FireblocksSimulator,
  signWebhookBody,
  startFireblocksSimulator,
} from '../src/simulators/fireblocks/index.ts';
import { eventually } from './support/eventually.ts';
import { fireblocksPayouts, fundedTreasury, listeningSandboxApp } from './support/fireblocks.ts';
import { api, BACKENDS, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** Fireblocks' delay in the address race: longer than either request takes to reach it, even on a busy machine. */
const RACE_LATENCY_MS = 1_500;
const toPayee = { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE };

describe.each(BACKENDS)('Fireblocks payouts on %s', (backend) => {
  let t: TestApp;
  let sim: FireblocksSimulator;
  let config: FireblocksConfig;
  let vaultAccountId: string;

  let payouts: ReturnType<typeof fireblocksPayouts>;

  beforeAll(async () => {
    t = await listeningSandboxApp(backend);
    sim = await startFireblocksSimulator({ stepMs: 5 });
    ({ config, vaultAccountId } = await fundedTreasury(sim));
    payouts = fireblocksPayouts(t);
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  /** A new organization with Fireblocks configured (its webhooks to the service) and a funded USDC wallet. */
  async function configured(sourceVault = vaultAccountId) {
    const org = await newOrganization(t);
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: sourceVault,
          webhook_public_key: sim.webhookPublicKey,
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.data).toMatchObject({ partner: 'fireblocks', rail: 'digital_asset', network: null });
    expect(created.body).not.toContain('PRIVATE KEY');
    sim.setWebhookUrl(`${created.data.callback_url}/webhook`);
    const wallet = await fundedWallet(t, '500.000000', 'USDC', org.key);
    return { key: org.key, wallet };
  }

  /** A configured organization's new USDC wallet with its ethereum deposit address issued, and its vault account. */
  async function walletInCustody(sourceVault = vaultAccountId) {
    const { key } = await configured(sourceVault);
    const wallet = await fundedWallet(t, '0', 'USDC', key);
    const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
      key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const name = encodeURIComponent(`mkoba ${wallet}`);
    const vaults = await fireblocksRequest(config, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
    const vaultId = (vaults.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
    return { key, wallet, vaultId };
  }

  const work = () => payouts.work();
  const send = (key: string, wallet: string, amount: string) => payouts.send(key, wallet, amount);
  const transferOf = (key: string, id: string) => payouts.transferOf(key, id);
  const final = (key: string, id: string) => payouts.final(key, id);
  const dueNow = (id: string) => payouts.dueNow(id);
  const transactionsFor = (transferId: string) =>
    sim.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/transactions' && r.body.includes(transferId),
    );

  it('sends a payout as a transaction with externalTxId = the transfer, settled by its signed webhook', async () => {
    const { key, wallet } = await configured();
    const id = await send(key, wallet, '25.500000');
    await work();
    await sim.whenIdle();
    const settled = await final(key, id);
    expect(settled.status).toBe('settled');
    const sent = JSON.parse(transactionsFor(id)[0]?.body ?? '{}');
    expect(sent).toMatchObject({
      externalTxId: id,
      assetId: 'USDC',
      amount: '25.5',
      source: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
      destination: { type: 'ONE_TIME_ADDRESS', oneTimeAddress: { address: PAYEE } },
    });
    const callbacks = (await api(t, 'GET', `/v1/rail-callbacks?transfer=${id}`, { key })).data.data as {
      status: string;
    }[];
    expect(callbacks.map((c) => c.status)).toContain('applied');
    await expectLedgerHealthy(t);
  });

  it.each([
    ['13.130000', 'partner_error'],
    ['14.140000', 'partner_canceled'],
    ['15.150000', 'partner_not_allowed'],
    ['16.160000', 'partner_rejected'],
  ])('fails amount %s %s and returns the money', async (amount, failureCode) => {
    const { key, wallet } = await configured();
    const id = await send(key, wallet, amount);
    await work();
    await sim.whenIdle();
    const failed = await final(key, id);
    expect(failed).toMatchObject({ status: 'failed', failure_code: failureCode });
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ available: '500.000000' });
    await expectLedgerHealthy(t);
  });

  it('settles by polling when no webhook comes, and a repeated webhook changes nothing twice', async () => {
    const { key, wallet } = await configured();
    const silent = await send(key, wallet, '17.170000');
    const twice = await send(key, wallet, '18.180000');
    await work();
    await sim.whenIdle();
    expect((await transferOf(key, silent)).status).not.toBe('settled');
    await dueNow(silent);
    await work();
    expect((await final(key, silent)).status).toBe('settled');
    expect((await final(key, twice)).status).toBe('settled');
    const entries = (await api(t, 'GET', `/v1/ledger/entries?transfer=${twice}`, { key })).data
      .data as unknown[];
    const silentEntries = (await api(t, 'GET', `/v1/ledger/entries?transfer=${silent}`, { key })).data
      .data as unknown[];
    expect(entries.length).toBe(silentEntries.length);
    await expectLedgerHealthy(t);
  });

  it('a retried submit finds the first transaction by externalTxId: never a second one', async () => {
    const rail = fireblocksRail(config);
    const { key, wallet } = await configured();
    const id = await send(key, wallet, '3.000000');
    const transfer = { id, amountMinor: 3_000000n, destination: toPayee } as never;
    const first = await rail.submit({ idempotencyReference: id, transfer }, new Date());
    const again = await rail.submit({ idempotencyReference: id, transfer }, new Date());
    expect(first).toMatchObject({ accepted: true });
    expect(again).toEqual({ ...first, checkAt: expect.any(Date) });
    expect(transactionsFor(id)).toHaveLength(2);
    expect(transactionsFor(id)[1]?.status).toBe(400);
    await sim.whenIdle();
  });

  it('a process killed after Fireblocks accepted a payout, before our record: the restart finds it by externalTxId, pays once', async () => {
    const { key, wallet } = await configured();
    await sim.whenIdle();
    const vaultTotal = async () =>
      (
        (await fireblocksRequest(config, 'GET', `/vault/accounts/${vaultAccountId}/USDC`)).body as {
          total: string;
        }
      ).total;
    const before = minorOfFireblocksAmount(await vaultTotal()) as bigint;
    const id = await send(key, wallet, '7.250000');
    const resolve = payoutRailResolver(railPartnerDirectory(t.deps), 'production');
    // The submit reaches Fireblocks and is accepted; the process dies before the answer is recorded, so
    // the acceptance (Fireblocks' transaction id) is never written. Nothing after the submit runs.
    const killedAfterAcceptance: RailResolver = async (transfer) => {
      const resolved = await resolve(transfer);
      if (!resolved) return resolved;
      const adapter = resolved.adapter;
      return {
        ...resolved,
        adapter: {
          ...adapter,
          submit: async (request, now) => {
            await adapter.submit(request, now);
            throw new Error('killed: the acceptance was never recorded');
          },
        },
      };
    };
    await runRailWorkerOnce(t.deps, killedAfterAcceptance, { log: () => {} });
    expect(transactionsFor(id).filter((r) => r.status === 200)).toHaveLength(1);
    expect((await transferOf(key, id)).rail_reference ?? null).toBeNull();
    // The restart: a new worker (a new directory) takes the transfer up again.
    await dueNow(id);
    await runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
      log: () => {},
    });
    await sim.whenIdle();
    const settled = await final(key, id);
    expect(settled.status).toBe('settled');
    const found = await fireblocksRequest(config, 'GET', `/transactions/external_tx_id/${id}`);
    expect(settled.rail_reference).toBe((found.body as { id: string }).id);
    // One transaction: the restart's submit was refused as a repeat of the externalTxId, then found by it.
    expect(transactionsFor(id).map((r) => r.status)).toEqual([200, 400]);
    expect(minorOfFireblocksAmount(await vaultTotal())).toBe(before - 7_250000n);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ current: '492.750000' });
    await expectLedgerHealthy(t);
  });

  it('issues deposit addresses from a vault account per wallet, the same one when asked again', async () => {
    const { key } = await configured();
    const usdc = await fundedWallet(t, '0', 'USDC', key);
    const usdt = await fundedWallet(t, '0', 'USDT', key);
    const ask = (wallet: string, network: string) =>
      api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, { key, body: { network } });
    const first = await ask(usdc, 'ethereum');
    expect(first.statusCode, first.body).toBe(201);
    const again = await ask(usdc, 'ethereum');
    expect(again.statusCode).toBe(200);
    expect(again.data.address).toBe(first.data.address);
    const tron = await ask(usdt, 'tron');
    expect(tron.statusCode, tron.body).toBe(201);
    expect(tron.data.address).toMatch(/^T/);
    const vaults = await fireblocksRequest(
      config,
      'GET',
      `/vault/accounts_paged?namePrefix=${encodeURIComponent(`mkoba ${usdc}`)}`,
    );
    const [vault] = (vaults.body as { accounts: Array<{ id: string; customerRefId: string }> }).accounts;
    expect(vault?.customerRefId).toBe(usdc);
    const addresses = await fireblocksRequest(
      config,
      'GET',
      `/vault/accounts/${vault?.id}/USDC/addresses_paginated`,
    );
    expect((addresses.body as { addresses: Array<{ address: string }> }).addresses[0]?.address).toBe(
      first.data.address,
    );
    const unanswered = await fundedWallet(t, '0', 'USDC', key);
    sim.failNext(1, 503);
    const refused = await ask(unanswered, 'ethereum');
    expect(refused.statusCode).toBe(503);
    expect(refused.data).toMatchObject({ code: 'service_unavailable', param: 'network' });
    expect((await ask(unanswered, 'ethereum')).statusCode).toBe(201);
  });

  it('two first requests for a wallet’s address at once end with one vault account and one address', async () => {
    const { key } = await configured();
    const wallet = await fundedWallet(t, '0', 'USDC', key);
    const ask = () =>
      api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, { key, body: { network: 'ethereum' } });
    // A slow Fireblocks: both requests have looked for a stored address before either is answered.
    sim.setLatency(RACE_LATENCY_MS);
    const [one, two] = await Promise.all([ask(), ask()]).finally(() => sim.setLatency(0));
    expect([one.statusCode, two.statusCode].sort(), `${one.body} ${two.body}`).toEqual([200, 201]);
    expect(one.data.address).toBe(two.data.address);
    // Both missed the lookup and asked Fireblocks for a vault account, with the same Idempotency-Key.
    const creates = sim.requests.filter(
      (r) => r.method === 'POST' && r.path === '/v1/vault/accounts' && r.body.includes(wallet),
    );
    expect(creates).toHaveLength(2);
    expect(new Set(creates.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    const vaults = await fireblocksRequest(
      config,
      'GET',
      `/vault/accounts_paged?namePrefix=${encodeURIComponent(`mkoba ${wallet}`)}`,
    );
    const accounts = (vaults.body as { accounts: Array<{ id: string; assets: unknown[] }> }).accounts;
    expect(accounts).toHaveLength(1);
    expect(accounts[0]?.assets).toHaveLength(1);
    const listed = await api(t, 'GET', `/v1/wallets/${wallet}/deposit-addresses`, { key });
    expect(listed.data.data).toHaveLength(1);
  });

  it('credits a deposit Fireblocks announces by signed webhook once, through the deposit worker', async () => {
    const { key, wallet, vaultId } = await walletInCustody();
    const once = sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: '42.5' });
    const twice = sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: '18.18' });
    await sim.whenIdle();
    const deposits = async () =>
      (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`, { key })).data.data as Array<{
        tx_hash: string;
        amount: string;
      }>;
    const recorded = await eventually(deposits, (list) => list.length === 2);
    expect(recorded.map((d) => [d.tx_hash, d.amount]).sort()).toEqual(
      [
        [sim.transaction(once.id)?.txHash, '42.500000'],
        [sim.transaction(twice.id)?.txHash, '18.180000'],
      ].sort(),
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ available: '60.680000' });
    await expectLedgerHealthy(t);
  });

  it('finds a deposit whose webhook never came by polling, and records it once', async () => {
    const { key, wallet, vaultId } = await walletInCustody();
    const silent = sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: '17.17' });
    await sim.whenIdle();
    expect(sim.webhooks.filter((w) => w.transactionId === silent.id)).toEqual([]);
    const deposits = async () =>
      (await api(t, 'GET', `/v1/deposits?wallet=${wallet}`, { key })).data.data as unknown[];
    expect(await deposits()).toEqual([]);
    const directory = railPartnerDirectory(t.deps);
    expect(await runCustodyDepositPollOnce(t.deps, directory)).toBeGreaterThanOrEqual(1);
    expect(await runCustodyDepositPollOnce(t.deps, directory)).toBe(0);
    expect(await deposits()).toHaveLength(1);
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ available: '17.170000' });
    await expectLedgerHealthy(t);
  });

  /** A custodied wallet credited with a deposit of `amount` into its vault account. */
  async function depositedInCustody(amount: string, sourceVault = vaultAccountId) {
    const custodied = await walletInCustody(sourceVault);
    sim.deposit({ vaultAccountId: custodied.vaultId, assetId: 'USDC', amount });
    await sim.whenIdle();
    await eventually(
      async () =>
        (await api(t, 'GET', `/v1/deposits?wallet=${custodied.wallet}`, { key: custodied.key })).data
          .data as unknown[],
      (list) => list.length === 1,
    );
    for (let i = 0; i < 3; i++) await runDepositWorkerOnce(t.deps, { log: () => {} });
    return custodied;
  }
  const vaultTotal = async (vault: string) =>
    minorOfFireblocksAmount(
      ((await fireblocksRequest(config, 'GET', `/vault/accounts/${vault}/USDC`)).body as { total: string })
        .total,
    ) as bigint;
  const sweepRequests = (vault: string) =>
    sim.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/v1/transactions' &&
        JSON.parse(r.body).source?.id === vault &&
        JSON.parse(r.body).destination?.type === 'VAULT_ACCOUNT',
    );
  const sweepsOf = async (key: string) =>
    (await api(t, 'GET', '/v1/safeguarding/sweeps?currency=USDC', { key })).data.data as any[];
  const sweepPass = (directory = railPartnerDirectory(t.deps)) => runCustodySweepPassOnce(t.deps, directory);

  it('sweeps a wallet vault’s deposits into the payout vault once, as a from_trust sweep; the wallet keeps its balance', async () => {
    // Other organizations' deposits from the tests before are swept first (into the same payout vault).
    await sweepPass();
    await sim.whenIdle();
    await sweepPass();
    const { key, wallet, vaultId } = await depositedInCustody('42.5');
    const sourceBefore = await vaultTotal(vaultAccountId);
    await sweepPass();
    await sim.whenIdle();
    expect(await sweepPass()).toBeGreaterThanOrEqual(1);
    const [sent] = sweepRequests(vaultId);
    expect(JSON.parse(sent?.body ?? '{}')).toMatchObject({
      amount: '42.5',
      destination: { type: 'VAULT_ACCOUNT', id: vaultAccountId },
      externalTxId: expect.stringMatching(/^csw_/),
    });
    expect(await vaultTotal(vaultId)).toBe(0n);
    expect(await vaultTotal(vaultAccountId)).toBe(sourceBefore + 42_500000n);
    const found = await fireblocksRequest(
      config,
      'GET',
      `/transactions/external_tx_id/${JSON.parse(sent?.body ?? '{}').externalTxId}`,
    );
    expect(await sweepsOf(key)).toMatchObject([
      {
        currency: 'USDC',
        rail: 'digital_asset',
        direction: 'from_trust',
        amount: '42.500000',
        reference: (found.body as { id: string }).id,
      },
    ]);
    const balance = await api(t, 'GET', `/v1/wallets/${wallet}`, { key });
    expect(balance.data.balance).toMatchObject({ available: '42.500000' });
    // Nothing left to sweep: later passes send nothing more.
    await sweepPass();
    expect(sweepRequests(vaultId)).toHaveLength(1);
    expect(await sweepsOf(key)).toHaveLength(1);
    await expectLedgerHealthy(t);
  });

  it('leaves a vault holding less than the sweep minimum alone', async () => {
    const { key, vaultId } = await depositedInCustody('9.999999');
    await sweepPass();
    expect(sweepRequests(vaultId)).toEqual([]);
    expect(await sweepsOf(key)).toEqual([]);
  });

  it('a process killed after Fireblocks accepted a sweep, before our record: the restart finds it by externalTxId', async () => {
    const { key, vaultId } = await depositedInCustody('30');
    const directory = railPartnerDirectory(t.deps);
    const killing = Object.create(directory) as typeof directory;
    killing.guarded = (partnerConfig) => {
      const resolved = directory.guarded(partnerConfig);
      const adapter = resolved.adapter as CustodyPartnerRail;
      return {
        ...resolved,
        adapter: {
          ...adapter,
          sweep: async (request, now) => {
            await adapter.sweep(request, now);
            throw new Error('killed: the acceptance was never recorded');
          },
        } satisfies CustodyPartnerRail,
      };
    };
    await expect(sweepPass(killing)).rejects.toThrow(/killed/);
    expect(sweepRequests(vaultId).map((r) => r.status)).toEqual([200]);
    await sim.whenIdle();
    await sweepPass();
    await sim.whenIdle();
    await sweepPass();
    expect(sweepRequests(vaultId).map((r) => r.status)).toEqual([200, 400]);
    expect(await vaultTotal(vaultId)).toBe(0n);
    expect(await sweepsOf(key)).toMatchObject([{ direction: 'from_trust', amount: '30.000000' }]);
    await expectLedgerHealthy(t);
  });

  it('a sweep Fireblocks refuses waits an hour, then longer, before the next try; each failure stays recorded', async () => {
    // A payout vault with no USDC asset wallet: Fireblocks refuses every sweep into it.
    const bare = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'bare payout vault' });
    const { vaultId } = await depositedInCustody('25', (bare.body as { id: string }).id);
    const failedSweeps = () =>
      t.db.store.query(
        `SELECT status, failure_code, attempt, retry_after FROM custody_sweeps
          WHERE vault_account_id = $1 ORDER BY created_at`,
        [vaultId],
      );
    const realNow = t.deps.now;
    const start = realNow();
    const at = (minutes: number) => {
      t.deps.now = () => new Date(start.getTime() + minutes * 60_000);
    };
    try {
      at(0);
      await sweepPass();
      expect(sweepRequests(vaultId).map((r) => r.status)).toEqual([404]);
      // Every 10-minute pass within the hour sends nothing and records nothing more.
      for (const minutes of [10, 20, 50]) {
        at(minutes);
        await sweepPass();
      }
      expect(sweepRequests(vaultId)).toHaveLength(1);
      expect(await failedSweeps()).toMatchObject([
        {
          status: 'failed',
          failure_code: 'partner_rejected',
          attempt: 1,
          retry_after: new Date(start.getTime() + CUSTODY_SWEEP_RETRY_MS),
        },
      ]);
      at(61);
      await sweepPass();
      expect(sweepRequests(vaultId).map((r) => r.status)).toEqual([404, 404]);
      // The second failure in a row waits two hours.
      at(61 + 110);
      await sweepPass();
      expect(sweepRequests(vaultId)).toHaveLength(2);
      at(61 + 121);
      await sweepPass();
      expect(sweepRequests(vaultId)).toHaveLength(3);
      const rows = await failedSweeps();
      expect(rows.map((r) => [r.status, r.attempt])).toEqual([
        ['failed', 1],
        ['failed', 2],
        ['failed', 3],
      ]);
      expect(new Date(rows[2]?.retry_after as string).getTime()).toBe(
        start.getTime() + (61 + 121) * 60_000 + 4 * CUSTODY_SWEEP_RETRY_MS,
      );
      expect(await vaultTotal(vaultId)).toBe(25_000000n);
    } finally {
      t.deps.now = realNow;
    }
    expect(sweepRetryAfter(40, start).getTime() - start.getTime()).toBe(CUSTODY_SWEEP_RETRY_MAX_MS);
  });

  it('refuses a webhook its signature does not verify, and ignores deposits and statuses on the way', () => {
    const body = JSON.stringify({
      type: 'TRANSACTION_STATUS_UPDATED',
      data: { id: 'x', status: 'COMPLETED' },
    });
    const forged = {
      path: 'webhook',
      rawBody: body,
      headers: { 'fireblocks-signature': signWebhookBody('{}') },
    };
    expect(() => parseFireblocksWebhook(config, forged)).toThrow(MalformedCallbackError);
    const unsigned = { path: 'webhook', rawBody: body, headers: {} };
    expect(() => parseFireblocksWebhook(config, unsigned)).toThrow(MalformedCallbackError);
    const signed = (event: object) => {
      const rawBody = JSON.stringify(event);
      return { path: 'webhook', rawBody, headers: { 'fireblocks-signature': signWebhookBody(rawBody) } };
    };
    const deposit = { id: 'd', status: 'COMPLETED', source: { type: 'UNKNOWN' } };
    expect(
      parseFireblocksWebhook(config, signed({ type: 'TRANSACTION_CREATED', data: deposit })),
    ).toMatchObject({
      kind: 'ignored',
    });
    const onTheWay = { id: 'o', status: 'BROADCASTING', source: { type: 'VAULT_ACCOUNT', id: '0' } };
    expect(
      parseFireblocksWebhook(config, signed({ type: 'TRANSACTION_STATUS_UPDATED', data: onTheWay })),
    ).toMatchObject({ kind: 'ignored' });
    expect(parseFireblocksWebhook(config, signed({ type: 'VAULT_ACCOUNT_ADDED', data: {} }))).toMatchObject({
      kind: 'ignored',
    });
  });
});
