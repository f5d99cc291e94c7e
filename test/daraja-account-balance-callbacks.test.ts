/**
 * Daraja's Account Balance result through the service: an organization's M-Pesa partner asks the simulator
 * for its balance, the result comes back over real HTTP to the service's callback address, is stored as it
 * arrived and recorded once (`ignored`: it moves no money), a repeat is a `duplicate`, and the stored bytes
 * read into exact minor units.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDarajaBalanceResult } from '../src/modules/railPartners/partners/mpesaDaraja/accountBalance.ts';
import {
  DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS,
  type DarajaSimulator,
  startDarajaSimulator,
} from '../src/simulators/mpesaDaraja/index.ts';
import { configureSimulatedDaraja } from './support/daraja.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { newOrganization } from './support/organizations.ts';

const CALLBACK_WAIT_MS = 5_000;
const POLL_MS = 20;

interface StoredCallback {
  path: string;
  status: string;
  detail: string | null;
  body: string;
}

describe.each(BACKENDS)('Daraja balance results on %s', (backend) => {
  let t: TestApp;
  let sim: DarajaSimulator;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    sim = await startDarajaSimulator();
  });
  afterAll(async () => {
    await sim?.close();
    await t?.close();
  });

  it('stores the result, records it once as ignored, and reads it exactly', async () => {
    const org = await newOrganization(t);
    const { callbackUrl, rail } = await configureSimulatedDaraja(t, org.key, sim);

    const asked = await rail.queryAccountBalance();
    await sim.idle();
    const stored = async () =>
      (await api(t, 'GET', '/v1/rail-callbacks?limit=100', { key: org.key })).data.data as StoredCallback[];
    let list = await stored();
    for (const until = Date.now() + CALLBACK_WAIT_MS; list.length === 0 && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      list = await stored();
    }
    expect(list.map((c) => [c.path, c.status, c.detail])).toEqual([
      ['balance/result', 'ignored', 'account_balance_result'],
    ]);
    const [first] = list;
    if (!first) throw new Error('unreachable');
    expect(first.body).toContain(asked.originatorConversationId);

    // The same bytes again: stored as a duplicate, recorded nothing more.
    const again = await fetch(`${callbackUrl}/balance/result`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: first.body,
    });
    expect(again.status).toBe(200);
    expect((await stored()).map((c) => c.status).sort()).toEqual(['duplicate', 'ignored']);

    const parsed = parseDarajaBalanceResult(JSON.parse(first.body) as Record<string, unknown>);
    expect(
      parsed.kind === 'balances' && parsed.accounts.find((a) => a.account === 'Utility Account'),
    ).toMatchObject({ currentMinor: BigInt(DARAJA_SIMULATOR_STARTING_FLOAT_SHILLINGS) * 100n });
  });
});
