/**
 * A real `mkoba worker` killed (SIGKILL) the moment a partner has accepted its payout, before it can
 * record the acceptance: a second `mkoba worker` finds the partner's transfer by our reference instead of
 * sending another, settles the payout once and the ledger verifies. The partners are their simulators,
 * real HTTP servers in this process, whose `afterAnswer` hook does the killing once the acceptance has
 * been written out. Organizations, partners and transfers are made through the in-process app on the
 * same PostgreSQL schema; it runs no workers and takes no webhooks (the simulators send none), so only
 * the worker processes move the payouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FireblocksConfig,
  fireblocksRequest,
} from '../../src/modules/railPartners/partners/fireblocks/connection.ts';
import { minorOfFireblocksAmount } from '../../src/modules/railPartners/partners/fireblocks/protocol.ts';
import { startFireblocksSimulator } from '../../src/simulators/fireblocks/index.ts';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  startFlutterwaveSimulator,
} from '../../src/simulators/flutterwave/index.ts';
import { eventually } from '../support/eventually.ts';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { balanceOf, fundedWallet } from '../support/ledger.ts';
import { newOrganization } from '../support/organizations.ts';
import { killOnAcceptance } from './killOnAcceptance.ts';
import { E2E_TEST_TIMEOUT_MS, MkobaProcesses, mkobaEnv, withTimeout } from './mkobaProcess.ts';

/** How long a worker gets to reach the partner, and the restarted one to settle (each wait ends on its event). */
const WORKER_WAIT_MS = 20_000;
/** How long a Flutterwave transfer takes to succeed at the simulator. */
const FLUTTERWAVE_PROCESSING_MS = 200;
/** The Fireblocks simulator's pause between a transaction's statuses. */
const FIREBLOCKS_STEP_MS = 5;
/** The worker's public address, which a partner is given but never calls here (no listener on port 9). */
const CALLBACKS_UNUSED_URL = 'http://127.0.0.1:9';
const PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

describe.skipIf(!TEST_DATABASE_URL)(
  'a worker killed after a partner accepted a payout (PostgreSQL)',
  { timeout: E2E_TEST_TIMEOUT_MS },
  () => {
    const processes = new MkobaProcesses();
    let t: TestApp;
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      t = await startTestApp('postgres', 'sandbox');
      const url = t.db.url as string;
      env = mkobaEnv({
        DATABASE_URL: url,
        MKOBA_ENV: 'sandbox',
        MKOBA_SANDBOX_SIMULATORS: '0',
        // Flutterwave is told where to call back; nothing is sent there (the simulators' webhooks are off).
        MKOBA_PUBLIC_URL: CALLBACKS_UNUSED_URL,
        MKOBA_ENCRYPTION_KEY: t.encryptionKey,
      });
    });
    afterAll(async () => {
      await processes.killAll();
      await t?.close();
    });

    const transferOf = async (key: string, id: string) =>
      (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
    const dueNow = (id: string) =>
      t.db.store.query(
        "UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1 AND status = 'processing'",
        [id, new Date()],
      );

    /**
     * Starts a worker that is killed at the partner's acceptance, checks nothing was recorded, then a second
     * worker, which must settle the payout; answers the settled transfer.
     */
    async function crashAndRestart(
      hook: ReturnType<typeof killOnAcceptance>,
      key: string,
      id: string,
    ): Promise<Record<string, unknown>> {
      const first = await processes.start(['worker'], env);
      hook.arm(first);
      const exit = await withTimeout(
        first.exited,
        WORKER_WAIT_MS,
        'the partner never accepted the payout',
      ).catch((error: Error) => {
        throw new Error(`${error.message}; the worker said:\n${first.stderr()}`);
      });
      expect(exit.signal, first.stderr()).toBe('SIGKILL');
      expect(hook.killed()).toBe(true);
      expect(await transferOf(key, id)).toMatchObject({ status: 'processing', rail_reference: null });

      // The dead worker's lease would run out in time; the restart need not wait for it.
      await dueNow(id);
      const second = await processes.start(['worker'], env);
      const recorded = await eventually(
        () => transferOf(key, id),
        (transfer) => transfer.rail_reference != null || second.hasExited(),
        WORKER_WAIT_MS,
      );
      expect(recorded.rail_reference, second.stderr()).not.toBeNull();
      // The partner's status is asked for at once rather than at the next poll.
      await dueNow(id);
      const settled = await eventually(
        () => transferOf(key, id),
        (transfer) => transfer.status !== 'processing' || second.hasExited(),
        WORKER_WAIT_MS,
      );
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expect(second.stderr()).not.toMatch(/failed|error/);
      return settled;
    }

    async function expectLedgerVerifies(): Promise<void> {
      const verified = await processes.run(['ledger', 'verify'], env);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      expect(verified.stderr).toContain('all invariants hold');
    }

    it('a Flutterwave bank payout: found by reference after the restart, one transfer, paid once', async () => {
      const hook = killOnAcceptance('POST', '/v3/transfers');
      const sim = await startFlutterwaveSimulator({
        processingMs: FLUTTERWAVE_PROCESSING_MS,
        afterAnswer: hook.afterAnswer,
      });
      try {
        // The payout's webhook would settle it without the worker; the restart is what is tested.
        sim.loseWebhooks(true);
        const org = await newOrganization(t);
        const configured = await api(t, 'POST', '/v1/rail-partners', {
          key: org.key,
          body: {
            partner: 'flutterwave',
            settings: { base_url: sim.url },
            credentials: { secret_key: sim.credentials.secretKey, secret_hash: sim.credentials.secretHash },
          },
        });
        expect(configured.statusCode, configured.body).toBe(201);
        const wallet = await fundedWallet(t, '10000.00', 'KES', org.key);
        const created = await api(t, 'POST', '/v1/transfers', {
          key: org.key,
          body: {
            source: wallet,
            destination: {
              type: 'bank_account',
              bank_code: '044',
              account_number: FLUTTERWAVE_SIMULATOR_ACCOUNTS.resolvesAndSucceeds.accountNumber,
            },
            amount: '2500.00',
            currency: 'KES',
          },
        });
        expect(created.statusCode, created.body).toBe(201);
        const id = created.data.id as string;

        const settled = await crashAndRestart(hook, org.key, id);
        const atFlutterwave = sim.transfers().filter((transfer) => transfer.reference === id);
        expect(atFlutterwave).toHaveLength(1);
        expect(settled).toMatchObject({ status: 'settled', rail_reference: String(atFlutterwave[0]?.id) });
        // The restart's POST under the same reference was refused, not accepted a second time.
        const posts = sim.requests.filter((r) => r.method === 'POST' && r.body.includes(id));
        expect(posts.map((r) => r.status)).toEqual([200, 400]);
        expect(sim.requests.some((r) => r.path === `/v3/transfers?reference=${id}`)).toBe(true);
        expect((await balanceOf(t, wallet, org.key)).available).toBe('7500.00');
        await expectLedgerVerifies();
      } finally {
        await sim.close();
      }
    });

    it('a Fireblocks digital-asset payout: found by externalTxId after the restart, one transaction, paid once', async () => {
      const hook = killOnAcceptance('POST', '/v1/transactions');
      const sim = await startFireblocksSimulator({
        stepMs: FIREBLOCKS_STEP_MS,
        afterAnswer: hook.afterAnswer,
      });
      try {
        const config: FireblocksConfig = {
          fetch: (url, init) => fetch(url, init as RequestInit),
          baseUrl: sim.baseUrl,
          apiKey: sim.credentials.apiKey,
          privateKey: sim.credentials.secretKey,
          webhookPublicKey: sim.webhookPublicKey,
          sourceVaultAccountId: '',
        };
        const vault = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'treasury' });
        const vaultId = (vault.body as { id: string }).id;
        await fireblocksRequest(config, 'POST', `/vault/accounts/${vaultId}/USDC`);
        sim.setBalance(vaultId, 'USDC', '1000');
        const org = await newOrganization(t);
        // No webhook address is set at the simulator: only the worker's own asking settles the payout.
        const configured = await api(t, 'POST', '/v1/rail-partners', {
          key: org.key,
          body: {
            partner: 'fireblocks',
            settings: {
              base_url: sim.baseUrl,
              source_vault_account_id: vaultId,
              webhook_public_key: sim.webhookPublicKey,
            },
            credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
          },
        });
        expect(configured.statusCode, configured.body).toBe(201);
        const wallet = await fundedWallet(t, '500.000000', 'USDC', org.key);
        const created = await api(t, 'POST', '/v1/transfers', {
          key: org.key,
          body: {
            source: wallet,
            destination: { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE },
            amount: '7.250000',
            currency: 'USDC',
          },
        });
        expect(created.statusCode, created.body).toBe(201);
        const id = created.data.id as string;

        const settled = await crashAndRestart(hook, org.key, id);
        // The restarted worker looked the transaction up by externalTxId (before this test does).
        expect(
          sim.requests.some((r) => r.method === 'GET' && r.path === `/v1/transactions/external_tx_id/${id}`),
        ).toBe(true);
        const found = await fireblocksRequest(config, 'GET', `/transactions/external_tx_id/${id}`);
        expect(settled).toMatchObject({
          status: 'settled',
          rail_reference: (found.body as { id: string }).id,
        });
        const accepted = sim.requests.filter(
          (r) => r.method === 'POST' && r.path === '/v1/transactions' && r.body.includes(id),
        );
        // The restart's submit was refused as a repeat of the externalTxId: one transaction.
        expect(accepted.map((r) => r.status)).toEqual([200, 400]);
        const held = await fireblocksRequest(config, 'GET', `/vault/accounts/${vaultId}/USDC`);
        expect(minorOfFireblocksAmount((held.body as { total: string }).total)).toBe(992_750000n);
        expect((await balanceOf(t, wallet, org.key)).available).toBe('492.750000');
        await expectLedgerVerifies();
      } finally {
        await sim.close();
      }
    });
  },
);
