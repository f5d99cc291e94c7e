/**
 * The Mkoba side of the failover test: two `mkoba serve` processes and one `mkoba worker` on one
 * DATABASE_URL (HAProxy's primary frontend) with `extraEnv` (DATABASE_READ_URL, the event stream), the
 * sandbox seeded with a known key, and the wallets and webhook subscription the load uses, all made through
 * the API.
 */
import { randomBytes } from 'node:crypto';
import { http, type MkobaProcess, MkobaProcesses, mkobaEnv, waitForBanner } from '../../e2e/mkobaProcess.ts';

export interface MkobaCluster {
  mkoba: MkobaProcesses;
  env: NodeJS.ProcessEnv;
  /** The servers' API bases (…/v1). */
  servers: string[];
  processes: MkobaProcess[];
  apiKey: string;
}

export async function startMkobaCluster(
  databaseUrl: string,
  dataDir: string,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<MkobaCluster> {
  const apiKey = `sk_sandbox_ha${randomBytes(16).toString('hex')}`;
  const env = mkobaEnv({
    DATABASE_URL: databaseUrl,
    MKOBA_DATA_DIR: dataDir,
    MKOBA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    MKOBA_SANDBOX_API_KEY: apiKey,
    HOST: '127.0.0.1',
    PORT: '0',
    MKOBA_SANDBOX_SIMULATORS: '0',
    MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
    // Each process keeps its own buckets; the load is one key's, so a 429 would say nothing of failover.
    MKOBA_RATE_LIMITS: 'off',
    ...extraEnv,
  });
  const mkoba = new MkobaProcesses();
  const startServer = async () => {
    const server = await mkoba.start(['serve'], env);
    return { server, banner: await waitForBanner(server) };
  };
  // The first migrates and seeds; the others start on what it made.
  const first = await startServer();
  const [second, worker] = await Promise.all([
    startServer(),
    mkoba.start(['worker'], env).then(async (w) => {
      await w.waitForStderr(/mkoba worker running/);
      return w;
    }),
  ]);
  return {
    mkoba,
    env,
    servers: [first.banner.baseUrl, second.banner.baseUrl],
    processes: [first.server, second.server, worker],
    apiKey,
  };
}

async function created(base: string, key: string, path: string, body: unknown): Promise<any> {
  const response = await http('POST', `${base}${path}`, key, body);
  if (response.status !== 201)
    throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** A KES wallet of a new customer, funded with `amount` through the sandbox. */
export async function fundedWallet(base: string, key: string, amount: string): Promise<string> {
  const customer = await created(base, key, '/customers', { type: 'individual', name: 'Failover Customer' });
  const wallet = await created(base, key, '/wallets', { owner: customer.id, currency: 'KES' });
  if (amount !== '0') await created(base, key, `/sandbox/wallets/${wallet.id}/fund`, { amount });
  return wallet.id;
}

/** A subscription to every event at `url`; its id. */
export async function subscribe(base: string, key: string, url: string): Promise<string> {
  return (await created(base, key, '/webhook-subscriptions', { url, events: ['*'] })).id;
}
