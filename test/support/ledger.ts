import { expect } from 'vitest';
import { verifyLedger } from '../../src/modules/ledger/useCases/verify.ts';
import { runRailWorkerOnce } from '../../src/modules/transfers/workers.ts';
import { sandboxRails } from '../../src/rails/sandbox.ts';
import { api, createCustomer, type TestApp } from './harness.ts';

export async function expectLedgerHealthy(t: TestApp): Promise<void> {
  expect(await verifyLedger(t.deps.store)).toEqual([]);
}

/** A new KES wallet (or other currency) funded through the sandbox collection route. */
export async function fundedWallet(
  t: TestApp,
  amount: string,
  currency = 'KES',
  key = t.key,
): Promise<string> {
  const owner = await createCustomer(t, key);
  const wallet = await api(t, 'POST', '/v1/wallets', { key, body: { owner, currency } });
  if (wallet.statusCode !== 201) throw new Error(wallet.body);
  if (amount !== '0') {
    const funded = await api(t, 'POST', `/v1/sandbox/wallets/${wallet.data.id}/fund`, {
      key,
      body: { amount },
    });
    if (funded.statusCode !== 201) throw new Error(funded.body);
  }
  return wallet.data.id;
}

/** A payout of 10.00 KES from `wallet` to a mobile-money number (the sandbox's magic numbers decide it); its id. */
export async function mobilePayout(t: TestApp, wallet: string, phone: string, key = t.key): Promise<string> {
  const created = await api(t, 'POST', '/v1/transfers', {
    key,
    body: { source: wallet, destination: mobileMoney(phone), amount: '10.00', currency: 'KES' },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.data.id as string;
}

export async function balanceOf(t: TestApp, walletId: string, key = t.key) {
  return (await api(t, 'GET', `/v1/wallets/${walletId}/balance`, { key })).data;
}

/** Runs the rail worker until nothing is due (bounded). */
export async function drainRails(t: TestApp, passesMax = 10): Promise<void> {
  for (let i = 0; i < passesMax; i++) {
    if ((await runRailWorkerOnce(t.deps, sandboxRails())) === 0) return;
  }
}

export function mobileMoney(phone: string, network = 'mpesa') {
  return { type: 'mobile_money', network, phone };
}
