/**
 * The custody deposit poll against the Fireblocks simulator's paged transaction history (a real HTTP
 * server), one organization on its own simulator: a deposit whose webhook never came is found after an
 * outage longer than the completion window (the poll starts where the last one left off), and a burst of
 * deposits larger than one page is read in full, over several passes when the page bound stops one.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS,
  runCustodyDepositPollOnce,
} from '../src/modules/railPartners/custodyWorkers.ts';
import { fireblocksRequest } from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import { FIREBLOCKS_DEPOSIT_PAGE } from '../src/modules/railPartners/partners/fireblocks/deposits.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { type FireblocksSimulator, startFireblocksSimulator } from '../src/simulators/fireblocks/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

/** The simulator's amount whose deposit sends no webhook at all: only the poll finds it. */
const SILENT = '17.17';

describe.each(BACKENDS)('Fireblocks missed deposits on %s', (backend) => {
  let t: TestApp;
  let sim: FireblocksSimulator;
  let key: string;
  let wallet: string;
  let vaultId: string;
  let configId: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startFireblocksSimulator({ stepMs: 1 });
    const org = await newOrganization(t);
    key = org.key;
    const created = await api(t, 'POST', '/v1/rail-partners', {
      key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: 'payout',
          webhook_public_key: sim.webhookPublicKey,
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    configId = created.data.id;
    wallet = await fundedWallet(t, '0', 'USDC', key);
    const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
      key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const vaults = await fireblocksRequest(
      {
        fetch: (url, init) => fetch(url, init as RequestInit),
        baseUrl: sim.baseUrl,
        apiKey: sim.credentials.apiKey,
        privateKey: sim.credentials.secretKey,
        webhookPublicKey: sim.webhookPublicKey,
        sourceVaultAccountId: '',
      },
      'GET',
      `/vault/accounts_paged?namePrefix=${encodeURIComponent(`mkoba ${wallet}`)}`,
    );
    vaultId = (vaults.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '';
    expect(vaultId).not.toBe('');
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  const recordedDeposits = async () =>
    Number(
      (await t.db.store.query('SELECT count(*) AS n FROM deposits WHERE wallet_id = $1', [wallet]))[0]?.n,
    );
  const markOf = async () =>
    (
      await t.db.store.query('SELECT read_after FROM custody_deposit_marks WHERE config_id = $1', [configId])
    )[0]?.read_after as Date;
  const historyReads = () =>
    sim.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/v1/transactions?'));
  const poll = (pages?: number) => runCustodyDepositPollOnce(t.deps, railPartnerDirectory(t.deps), pages);

  it('finds a deposit missed through an outage longer than a day, from where the last look left off', async () => {
    const lookedAt = t.deps.now().getTime();
    expect(await poll()).toBe(0);
    // A first look reads the last day, and the next starts a day back from it.
    const mark = new Date(await markOf()).getTime() + CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS;
    expect(mark).toBeGreaterThanOrEqual(lookedAt);
    expect(mark).toBeLessThanOrEqual(t.deps.now().getTime());
    sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: SILENT });
    await sim.whenIdle();
    // Two days on: a look reaching back only a day from now would not see it.
    const realNow = t.deps.now;
    t.deps.now = () => new Date(realNow().getTime() + 2 * CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS);
    try {
      expect(await poll()).toBe(1);
      expect(await recordedDeposits()).toBe(1);
      expect(await poll()).toBe(0);
    } finally {
      t.deps.now = realNow;
      // Back at today, the next look starts a day back again.
      await t.db.store.query('DELETE FROM custody_deposit_marks WHERE config_id = $1', [configId]);
    }
  });

  it('reads a burst over one page in full: a bounded pass leaves the rest to the next from its last read', async () => {
    const before = await recordedDeposits();
    const burst = FIREBLOCKS_DEPOSIT_PAGE + 1;
    for (let i = 0; i < burst; i++) sim.deposit({ vaultAccountId: vaultId, assetId: 'USDC', amount: SILENT });
    await sim.whenIdle();
    // One page a pass: the first pass reads one page and leaves the mark at its last transaction.
    let reads = historyReads().length;
    const first = await poll(1);
    expect(historyReads().length - reads).toBe(1);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(burst);
    const mark = new Date(await markOf()).getTime();
    expect(mark).toBeGreaterThan(t.deps.now().getTime() - CUSTODY_DEPOSIT_COMPLETION_WINDOW_MS);
    // The next pass starts there and reads the rest.
    const rest = await poll(1);
    expect(first + rest).toBe(burst);
    expect(await recordedDeposits()).toBe(before + burst);
    // A look from a day back reads the whole burst in one pass, page after page by the next-page cursor.
    await t.db.store.query('DELETE FROM custody_deposit_marks WHERE config_id = $1', [configId]);
    reads = historyReads().length;
    expect(await poll()).toBe(0);
    const pages = historyReads().slice(reads);
    expect(pages).toHaveLength(2);
    expect(pages[1]?.path).toMatch(/[?&]next=/);
    expect(await recordedDeposits()).toBe(before + burst);
    await expectLedgerHealthy(t);
  }, 60_000);
});
