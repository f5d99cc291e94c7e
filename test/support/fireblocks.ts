/**
 * What the Fireblocks tests share: the service listening on a port (so the simulator's webhooks reach its
 * callback route), a simulator's treasury vault funded with USDC to pay from, and the payout helpers (send a
 * `digital_asset` payout, run the rail worker, read the transfer until it is final).
 */
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import {
  type FireblocksConfig,
  fireblocksRequest,
} from '../../src/modules/railPartners/partners/fireblocks/connection.ts';
import { railPartnerDirectory } from '../../src/modules/railPartners/useCases/directory.ts';
import { runRailWorkerOnce } from '../../src/modules/transfers/workers.ts';
import { payoutRailResolver } from '../../src/railWork.ts';
import type { FireblocksSimulator } from '../../src/simulators/fireblocks/index.ts';
import { eventually } from './eventually.ts';
import { api, type Backend, startTestApp, type TestApp } from './harness.ts';

export const FIREBLOCKS_PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
export const toFireblocksPayee = {
  type: 'crypto_address',
  asset: 'USDC',
  network: 'ethereum',
  address: FIREBLOCKS_PAYEE,
};

/** A sandbox service listening on a free port, its public URL set to it. */
export async function listeningSandboxApp(backend: Backend): Promise<TestApp> {
  const t = await startTestApp(backend, 'sandbox');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  return t;
}

/** How a test talks to the simulator as Fireblocks' API (no source vault yet). */
export function simulatorConfig(sim: FireblocksSimulator): FireblocksConfig {
  return {
    fetch: (url, init) => fetch(url, init as RequestInit),
    baseUrl: sim.baseUrl,
    apiKey: sim.credentials.apiKey,
    privateKey: sim.credentials.secretKey,
    webhookPublicKey: sim.webhookPublicKey,
    sourceVaultAccountId: '',
  };
}

/** A vault account `treasury` in the simulator with a USDC wallet holding 1000, and a config calling it. */
export async function fundedTreasury(
  sim: FireblocksSimulator,
): Promise<{ config: FireblocksConfig; vaultAccountId: string }> {
  const config = simulatorConfig(sim);
  const vault = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'treasury' });
  const vaultAccountId = (vault.body as { id: string }).id;
  config.sourceVaultAccountId = vaultAccountId;
  await fireblocksRequest(config, 'POST', `/vault/accounts/${vaultAccountId}/USDC`);
  sim.setBalance(vaultAccountId, 'USDC', '1000');
  return { config, vaultAccountId };
}

/** Payouts to FIREBLOCKS_PAYEE through the organization's Fireblocks, and reading them. */
export function fireblocksPayouts(t: TestApp) {
  const transferOf = async (key: string, id: string) =>
    (await api(t, 'GET', `/v1/transfers/${id}`, { key })).data;
  return {
    work: () =>
      runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'production'), {
        log: () => {},
      }),
    async send(key: string, wallet: string, amount: string): Promise<string> {
      const created = await api(t, 'POST', '/v1/transfers', {
        key,
        body: { source: wallet, destination: toFireblocksPayee, amount, currency: 'USDC' },
      });
      expect(created.statusCode, created.body).toBe(201);
      return created.data.id as string;
    },
    transferOf,
    final: (key: string, id: string) =>
      eventually(
        () => transferOf(key, id),
        (tr) => tr.status === 'settled' || tr.status === 'failed',
      ),
    dueNow: (id: string) =>
      t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]),
  };
}
