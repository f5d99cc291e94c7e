/**
 * The sandbox scenario launch gate on the sandbox as `npm start` lays it out: the seeded organization's
 * M-Pesa payouts go through the Daraja adapter to the partner simulator (a real HTTP server whose callbacks
 * come back over real HTTP), as the server wires them (startSandboxSimulators, payoutRailResolver in src/railWork.ts). The test
 * follows docs/GOING-LIVE.md's steps for the gate: `+254700000000` settles, `+254700000001` fails,
 * `+254700000003` is never answered and, once the rail's result time-out has passed, shows
 * `status_reason: rail_timeout`; a settled one is returned; the gate passes. Time is moved with the
 * service's clock, not slept through.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { RAIL_RESULT_TIMEOUT_MS, runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { payoutRailResolver, startSandboxSimulators } from '../src/railWork.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet, mobilePayout } from './support/ledger.ts';

/** How long the simulator's callbacks may take to arrive and be applied (real HTTP on this machine). */
const CALLBACK_WAIT_MS = 5_000;
const POLL_MS = 20;

describe.each(BACKENDS)('the sandbox scenario on the default sandbox on %s', (backend) => {
  let t: TestApp;
  let stopSimulators: () => Promise<void>;
  const realNow = () => new Date();

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    // As `mkoba serve` does in the sandbox: callbacks come to the address it listens on.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    stopSimulators = (await startSandboxSimulators(t.deps, () => {})).stop;
  });
  afterAll(async () => {
    t.deps.now = realNow;
    await stopSimulators?.();
    await t?.close();
  });

  const work = () => runRailWorkerOnce(t.deps, payoutRailResolver(railPartnerDirectory(t.deps), 'sandbox'));
  const transferOf = async (id: string) => (await api(t, 'GET', `/v1/transfers/${id}`)).data;
  const scenarioGate = async () => {
    const listed = await api(t, 'GET', '/v1/launch-gates?product=mobile_money');
    expect(listed.statusCode, listed.body).toBe(200);
    return listed.data.data.find((g: { gate: string }) => g.gate === 'sandbox_scenario_completed');
  };

  async function settledOrFailed(id: string) {
    const until = Date.now() + CALLBACK_WAIT_MS;
    for (;;) {
      const transfer = await transferOf(id);
      if (transfer.status !== 'processing' || Date.now() > until) return transfer;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  it("passes by GOING-LIVE.md's steps: settle, fail, a time-out after the documented wait, a return", async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const pay = (phone: string) => mobilePayout(t, wallet, phone);
    const settles = await pay('+254700000000');
    const fails = await pay('+254700000001');
    const timesOut = await pay('+254700000003');
    await work();
    expect(await settledOrFailed(settles)).toMatchObject({ status: 'settled' });
    expect(await settledOrFailed(fails)).toMatchObject({
      status: 'failed',
      failure_code: 'recipient_not_registered',
    });
    // Daraja accepted the third (its reference is the transfer id, where the built-in simulated rails would
    // name `sim_…`) and never answers: no result, and no time-out yet.
    expect(await transferOf(timesOut)).toMatchObject({
      status: 'processing',
      status_reason: null,
      rail_reference: timesOut,
    });
    expect((await scenarioGate()).evidence.missing).toEqual(['timed_out', 'returned']);

    // The documented wait: RAIL_RESULT_TIMEOUT_MS after the hand-off, the worker's status enquiry still finds
    // it pending, and marks it timed out. The money stays held.
    t.deps.now = () => new Date(Date.now() + RAIL_RESULT_TIMEOUT_MS);
    try {
      await work();
    } finally {
      t.deps.now = realNow;
    }
    expect(await transferOf(timesOut)).toMatchObject({ status: 'processing', status_reason: 'rail_timeout' });
    expect(await scenarioGate()).toMatchObject({
      state: 'open',
      evidence: {
        settled: { transfer: settles },
        failed: { transfer: fails },
        timed_out: { transfer: timesOut },
        missing: ['returned'],
      },
    });

    const returned = await api(t, 'POST', `/v1/sandbox/transfers/${settles}/return`);
    expect(returned.statusCode, returned.body).toBe(200);
    expect(await scenarioGate()).toMatchObject({
      state: 'passed',
      evidence: { timed_out: { transfer: timesOut }, returned: { transfer: settles } },
    });
    await expectLedgerHealthy(t);
  });
});
