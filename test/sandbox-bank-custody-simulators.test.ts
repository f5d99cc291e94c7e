/**
 * The sandbox as `npm start` lays it out, beyond mobile money: the seeded organization's bank payouts, NGN
 * virtual account numbers and bank deposits go through the Flutterwave adapter to the Flutterwave
 * simulator, and its `digital_asset` payouts and deposit addresses through the Fireblocks adapter to the
 * Fireblocks simulator (real HTTP servers whose webhooks come back over real HTTP), as the server wires them
 * (startSandboxSimulators, payoutRailResolver in src/railWork.ts). Starting again on the same database
 * points the same partners at the new simulators.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_ORGANIZATION_NAME } from '../src/app/seed.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { runCustodyDepositPollOnce } from '../src/modules/railPartners/custodyWorkers.ts';
import { fireblocksRequest } from '../src/modules/railPartners/index.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runRailCreditVerificationWorkerOnce } from '../src/modules/railPartners/workers.ts';
import { runDepositWorkerOnce } from '../src/modules/stablecoins/workers.ts';
import { RAIL_RESULT_TIMEOUT_MS, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import type { RunningPartnerSimulators } from '../src/partnerSimulators.ts';
import { fireblocksSimulatorClient, payoutRailResolver, startSandboxSimulators } from '../src/railWork.ts';
import { FLUTTERWAVE_SIMULATOR_ACCOUNTS } from '../src/simulators/flutterwave/index.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { balanceOf, expectLedgerHealthy, fundedWallet } from './support/ledger.ts';

const PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const { resolvesAndSucceeds, transferFails } = FLUTTERWAVE_SIMULATOR_ACCOUNTS;

describe.each(BACKENDS)('the sandbox’s Flutterwave and Fireblocks simulators on %s', (backend) => {
  let t: TestApp;
  let sims: RunningPartnerSimulators;
  let adminKey: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    // As `mkoba serve` does in the sandbox: callbacks come to the address it listens on.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sims = await startSandboxSimulators(t.deps, () => {});
    adminKey = (
      await issueApiKey(t.deps, { organizationName: SANDBOX_ORGANIZATION_NAME, scopes: ['read', 'admin'] })
    ).key;
  });
  afterAll(async () => {
    await sims?.stop();
    await t?.close();
  });

  const work = () =>
    runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'sandbox'), {
      log: () => {},
    });
  const transferOf = async (id: string) => (await api(t, 'GET', `/v1/transfers/${id}`)).data;
  const final = (id: string) =>
    eventually(
      () => transferOf(id),
      (transfer) => transfer.status === 'settled' || transfer.status === 'failed',
    );
  const partners = async () =>
    (await api(t, 'GET', '/v1/rail-partners?limit=100', { key: adminKey })).data.data as Array<{
      partner: string;
      rail: string;
      status: string;
      settings: Record<string, string>;
    }>;

  async function send(source: string, destination: object, amount: string, currency: string) {
    const created = await api(t, 'POST', '/v1/transfers', {
      body: { source, destination, amount, currency },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  it('configures the sandbox organization’s bank and digital-asset partners to the simulators', async () => {
    const active = (await partners()).filter((p) => p.status === 'active');
    expect(active.map((p) => `${p.partner}:${p.rail}`).sort()).toEqual([
      'fireblocks:digital_asset',
      'flutterwave:bank',
      'mpesa_daraja:mobile_money',
      'mtn_momo:mobile_money',
    ]);
    expect(active.find((p) => p.partner === 'flutterwave')?.settings.base_url).toBe(sims.flutterwaveUrl);
    expect(active.find((p) => p.partner === 'fireblocks')?.settings).toMatchObject({
      base_url: sims.fireblocksUrl,
      source_vault_account_id: sims.fireblocksSourceVaultId,
    });
  });

  it('pays bank accounts through Flutterwave: settled and failed by its webhooks', async () => {
    const wallet = await fundedWallet(t, '10000.00');
    const bank = (account: { accountNumber: string }, name?: string) => ({
      type: 'bank_account',
      bank_code: '044',
      account_number: account.accountNumber,
      ...(name ? { account_name: name } : {}),
    });
    const settles = await send(wallet, bank(resolvesAndSucceeds, 'Pastor Bright'), '1500.00', 'KES');
    const fails = await send(wallet, bank(transferFails), '1000.00', 'KES');
    await work();
    const sent = sims.flutterwave.transfers();
    expect(sent.find((transfer) => transfer.reference === settles)).toMatchObject({ amount: 1500 });
    expect(sent.find((transfer) => transfer.reference === fails)).toBeDefined();
    expect(await final(settles)).toMatchObject({ status: 'settled' });
    expect(await final(fails)).toMatchObject({ status: 'failed', failure_code: 'partner_rejected' });
    expect((await balanceOf(t, wallet)).available).toBe('8500.00');
    await expectLedgerHealthy(t);
  });

  it('gives an NGN wallet a Flutterwave virtual account and credits a bank transfer into it', async () => {
    const wallet = await fundedWallet(t, '0', 'NGN');
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, {
      body: { bvn: '22123456789', email: 'holder@example.com' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const accountNumber = made.data.account_number as string;
    expect(sims.flutterwave.virtualAccounts().map((a) => a.account_number)).toContain(accountNumber);
    const charge = await sims.flutterwave.payIntoVirtualAccount({ accountNumber, amount: 2500 });
    const [delivery] = await sims.flutterwave.waitForWebhooks({ id: charge.id });
    expect(delivery).toMatchObject({ status: 200 });
    await runRailCreditVerificationWorkerOnce(t.deps, railPartnerDirectory(t.deps));
    expect((await balanceOf(t, wallet)).available).toBe('2500.00');
    await expectLedgerHealthy(t);
  });

  it('pays digital assets from the Fireblocks source vault, and issues and credits deposit addresses', async () => {
    const wallet = await fundedWallet(t, '100.000000', 'USDC');
    const toPayee = { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE };
    const settles = await send(wallet, toPayee, '25.000000', 'USDC');
    const fails = await send(wallet, toPayee, '13.130000', 'USDC');
    await work();
    await sims.fireblocks.whenIdle();
    expect(await final(settles)).toMatchObject({ status: 'settled' });
    expect(await final(fails)).toMatchObject({ status: 'failed', failure_code: 'partner_error' });
    const sent = sims.fireblocks.requests.filter((r) => r.method === 'POST' && r.path === '/v1/transactions');
    expect(sent.map((r) => JSON.parse(r.body).source)).toEqual([
      { type: 'VAULT_ACCOUNT', id: sims.fireblocksSourceVaultId },
      { type: 'VAULT_ACCOUNT', id: sims.fireblocksSourceVaultId },
    ]);

    const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const vaultId = await walletVault(wallet);
    sims.fireblocks.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: '42.5' });
    await sims.fireblocks.whenIdle();
    await runCustodyDepositPollOnce(t.deps, railPartnerDirectory(t.deps));
    await eventually(
      async () => {
        await runDepositWorkerOnce(t.deps, { log: () => {} });
        return (await balanceOf(t, wallet)).available;
      },
      (available) => available === '117.500000',
    );
    await expectLedgerHealthy(t);
  });

  it('times out a bank payout Flutterwave never answers and a crypto payout Fireblocks never finishes', async () => {
    const kes = await fundedWallet(t, '1000.00');
    const usdc = await fundedWallet(t, '100.000000', 'USDC');
    const { staysPending } = FLUTTERWAVE_SIMULATOR_ACCOUNTS;
    const bank = { type: 'bank_account', bank_code: '044', account_number: staysPending.accountNumber };
    const crypto = { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE };
    const silentBank = await send(kes, bank, '100.00', 'KES');
    const stuckCrypto = await send(usdc, crypto, '19.190000', 'USDC');
    await work();
    await sims.fireblocks.whenIdle();
    for (const id of [silentBank, stuckCrypto]) {
      expect(await transferOf(id)).toMatchObject({ status: 'processing', status_reason: null });
    }
    // As README says: RAIL_RESULT_TIMEOUT_MS after the hand-off, still not final, it shows the time-out.
    t.deps.now = () => new Date(Date.now() + RAIL_RESULT_TIMEOUT_MS);
    try {
      await work();
    } finally {
      t.deps.now = () => new Date();
    }
    for (const id of [silentBank, stuckCrypto]) {
      expect(await transferOf(id)).toMatchObject({ status: 'processing', status_reason: 'rail_timeout' });
    }
  });

  // Last: the partners point at the second run's simulators after it.
  it('points the same partners at new simulators when the sandbox starts again', async () => {
    const before = await partners();
    const again = await startSandboxSimulators(t.deps, () => {});
    try {
      const after = await partners();
      expect(after.map((p) => p.partner).sort()).toEqual(before.map((p) => p.partner).sort());
      expect(after.find((p) => p.partner === 'fireblocks')?.settings.base_url).toBe(again.fireblocksUrl);
      expect(after.find((p) => p.partner === 'flutterwave')?.settings.base_url).toBe(again.flutterwaveUrl);
    } finally {
      await again.stop();
    }
  });

  /** The Fireblocks vault account the adapter opened for a wallet (named after it). */
  async function walletVault(wallet: string): Promise<string> {
    const client = fireblocksSimulatorClient(sims.fireblocks);
    const name = encodeURIComponent(`mkoba ${wallet}`);
    const vaults = await fireblocksRequest(client, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
    return (vaults.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
  }
});
