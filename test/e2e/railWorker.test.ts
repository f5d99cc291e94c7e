import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Banner,
  http,
  MkobaProcesses,
  mkobaEnv,
  temporaryDataDir,
  waitForBanner,
} from './mkobaProcess.ts';

/** What `npm start` runs: the sandbox server moves transfers to their outcome by itself. */
describe('mkoba serve runs the rail worker', () => {
  const processes = new MkobaProcesses();
  const dataDir = temporaryDataDir();
  let banner: Banner;
  let key: string;
  beforeAll(async () => {
    const server = processes.start(['serve'], mkobaEnv({ PORT: '0', MKOBA_DATA_DIR: dataDir.dir }));
    banner = await waitForBanner(server);
    key = banner.sandboxApiKey as string;
  });
  afterAll(async () => {
    await processes.killAll();
    dataDir.remove();
  });

  it('settles and fails mobile-money transfers asynchronously, per the magic numbers', async () => {
    const wallets = await http('GET', `${banner.baseUrl}/wallets?currency=KES`, key);
    const wallet = wallets.body.data[0].id as string;
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
    expect(balance.body).toMatchObject({ available: '90.00', pending: '0.00', current: '90.00' });
  });
});
