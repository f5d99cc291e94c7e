import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { fundedWallet, mobileMoney } from '../support/ledger.ts';
import { REFUSED_REFERENCE_MESSAGE, refuseRailReferences } from '../support/railFaults.ts';
import {
  type Banner,
  E2E_TEST_TIMEOUT_MS,
  http,
  MkobaProcesses,
  mkobaEnv,
  READINESS_LAST_RESORT_MS,
  temporaryDataDir,
  waitForBanner,
  waitUntil,
} from './mkobaProcess.ts';

/** Last resort: how long a started process gets to claim a transfer and report it (the wait ends on its line). */
const REPORT_TIMEOUT_MS = READINESS_LAST_RESORT_MS;

/** What `npm start` runs: the sandbox server moves transfers to their outcome by itself. */
describe('mkoba serve runs the rail worker', { timeout: E2E_TEST_TIMEOUT_MS }, () => {
  const processes = new MkobaProcesses();
  const dataDir = temporaryDataDir();
  let banner: Banner;
  let key: string;
  beforeAll(async () => {
    const server = await processes.start(['serve'], mkobaEnv({ PORT: '0', MKOBA_DATA_DIR: dataDir.dir }));
    banner = await waitForBanner(server);
    key = banner.sandboxApiKey as string;
  }, E2E_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await processes.killAll();
    dataDir.remove();
  });

  it('settles and fails mobile-money transfers asynchronously, per the magic numbers', async () => {
    const wallets = await http('GET', `${banner.baseUrl}/wallets?currency=KES`, key);
    const wallet = wallets.body.data[0].id as string;
    // The seeded wallets start funded: the outcome is measured from what this one held before.
    const cents = (amount: string) => BigInt(amount.replace('.', ''));
    const before = cents(
      (await http('GET', `${banner.baseUrl}/wallets/${wallet}/balance`, key)).body.available,
    );
    const plus = (delta: bigint) => {
      const total = (before + delta).toString().padStart(3, '0');
      return `${total.slice(0, -2)}.${total.slice(-2)}`;
    };
    expect(
      (await http('POST', `${banner.baseUrl}/sandbox/wallets/${wallet}/fund`, key, { amount: '100.00' }))
        .status,
    ).toBe(201);
    const send = (phone: string) =>
      http('POST', `${banner.baseUrl}/transfers`, key, {
        source: wallet,
        destination: { type: 'mobile_money', network: 'mpesa', phone },
        amount: '10.00',
        currency: 'KES',
      });
    const settles = await send('+254700000000');
    const fails = await send('+254700000001');
    expect(settles.body.status).toBe('pending');

    const finalStatus = async (id: string) =>
      (await http('GET', `${banner.baseUrl}/transfers/${id}`, key)).body;
    let settled: any;
    let failed: any;
    const poll = async () => {
      settled = await finalStatus(settles.body.id);
      failed = await finalStatus(fails.body.id);
    };
    await poll();
    const deadline = Date.now() + 20_000;
    while ((settled.status !== 'settled' || failed.status !== 'failed') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await poll();
    }
    expect(settled).toMatchObject({ status: 'settled', ledger_state: 'posted' });
    expect(failed).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_not_registered',
      ledger_state: 'voided',
    });
    const balance = await http('GET', `${banner.baseUrl}/wallets/${wallet}/balance`, key);
    // Funded 100.00, paid 10.00; the failed 10.00 came back.
    expect(balance.body).toMatchObject({ available: plus(9000n), pending: '0.00', current: plus(9000n) });
  });
});

/**
 * What the rail worker could not do reaches each process's log with the transfer id, the rail and the
 * error message: `mkoba worker` on stderr, `mkoba serve` through its JSON logger.
 */
describe.skipIf(!TEST_DATABASE_URL)(
  'mkoba processes log rail-worker failures (PostgreSQL)',
  {
    timeout: E2E_TEST_TIMEOUT_MS,
  },
  () => {
    const processes = new MkobaProcesses();
    let t: TestApp;
    let env: NodeJS.ProcessEnv;
    beforeAll(async () => {
      // Transfers are made in this process (which runs no workers); the mkoba processes share its schema.
      t = await startTestApp('postgres');
      const url = t.db.url as string;
      env = mkobaEnv({
        DATABASE_URL: url,
        MKOBA_ENV: 'sandbox',
        PORT: '0',
        MKOBA_ENCRYPTION_KEY: t.encryptionKey,
      });
      // The database refuses to record any rail reference, so every answer the rail gives fails to record.
      await refuseRailReferences(t.db.store);
    });
    afterAll(async () => {
      await processes.killAll();
      await t?.close();
    });

    const newTransfer = async (): Promise<string> => {
      const wallet = await fundedWallet(t, '100.00');
      const created = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
      });
      expect(created.statusCode, created.body).toBe(201);
      return created.data.id;
    };

    it('mkoba worker and mkoba serve each log the transfer, rail and error', async () => {
      const first = await newTransfer();
      const worker = await processes.start(['worker'], env);
      await worker.waitForStderr(
        new RegExp(
          `mkoba worker: rail-worker error: could not record the rail answer \\(transfer_id=${first} rail=mobile_money error=${REFUSED_REFERENCE_MESSAGE}\\)`,
        ),
        REPORT_TIMEOUT_MS,
      );
      expect(await worker.stop()).toEqual({ code: 0, signal: null });

      // The first transfer stays leased for a while; the server's own rail worker takes the second.
      const second = await newTransfer();
      const server = await processes.start(['serve'], env);
      // The server's log (one JSON object per line) goes to stderr.
      await waitUntil(
        () => server.stderr().includes(second),
        REPORT_TIMEOUT_MS,
        'the server to log the transfer',
        server,
      );
      const line = server
        .stderr()
        .split('\n')
        .find((l) => l.includes(second));
      expect(JSON.parse(line as string)).toMatchObject({
        level: 50,
        worker: 'rail-worker',
        transfer_id: second,
        rail: 'mobile_money',
        error: REFUSED_REFERENCE_MESSAGE,
        msg: 'could not record the rail answer',
      });
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    });
  },
);
