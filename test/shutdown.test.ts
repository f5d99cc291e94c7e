/**
 * What a stopping process does, piece by piece (the whole, with real processes behind HAProxy, is
 * test/e2e/rolling-restart.test.ts): readiness fails and answers close their connections while it drains;
 * workers stop between items; webhook deliveries and rail work still in flight are handed back, due again
 * at once, instead of waiting for their lease to run out.
 */
import { getEventListeners } from 'node:events';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/variables.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { loadConfig, SHUTDOWN_DRAIN_MS_DEFAULT, WORKER_HAND_BACK_AFTER_MS } from '../src/config.ts';
import { hashApiKey } from '../src/domain/apiKeys.ts';
import { buildApp } from '../src/http/app.ts';
import { listTransfers } from '../src/modules/transfers/repository.ts';
import { runRailWorkerOnce } from '../src/modules/transfers/workers.ts';
import { startWebhookDispatcher } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import type { RailAdapter, RailRegistry } from '../src/rails/rail.ts';
import { findApiKeyByHash } from '../src/store/repositories/apiKeys.ts';
import { stopSignals, unlessHandedBack } from '../src/workers/periodic.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';

/** A send time-out far longer than the test: only the hand-back can free a hanging delivery in time. */
const LONG_WEBHOOK_TIMEOUT_MS = 60_000;
/** Every wait in this file is bounded by this. */
const WAIT_MS_MAX = 20_000;
/** Slack for a loaded machine on top of WORKER_HAND_BACK_AFTER_MS. */
const STOP_SLACK_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS_MAX;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${WAIT_MS_MAX} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** A webhook receiver that never answers while `hang` is set, and answers 200 otherwise. */
async function startReceiver() {
  const state = { hang: true, arrivals: 0, url: '' };
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.arrivals += 1;
      if (!state.hang) response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  state.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { state, close };
}

function everyRail(adapter: RailAdapter): RailRegistry {
  return {
    mobile_money: adapter,
    bank: adapter,
    paybill: adapter,
    till: adapter,
    card: adapter,
    internal: adapter,
    digital_asset: adapter,
  };
}

describe.each(BACKENDS)('a stopping process on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  });
  afterAll(() => t.close());

  it('fails readiness and closes each connection after its answer while it drains, still serving', async () => {
    let draining = false;
    const app = await buildApp({ deps: t.deps, draining: () => draining });
    try {
      const before = await app.inject({ method: 'GET', url: '/readyz' });
      expect(before.statusCode).toBe(200);
      expect(before.headers.connection).not.toBe('close');
      draining = true;
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ code: 'service_unavailable' });
      expect(ready.headers['retry-after']).toBe('1');
      const served = await app.inject({
        method: 'GET',
        url: '/v1/wallets',
        headers: { authorization: `Bearer ${t.key}` },
      });
      expect(served.statusCode).toBe(200);
      expect(served.headers.connection).toBe('close');
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('hands back a webhook delivery still unanswered when it stops, and another dispatcher sends it at once', async () => {
    const receiver = await startReceiver();
    try {
      const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
        body: { url: receiver.state.url, events: ['transfer.created'] },
      });
      expect(subscription.statusCode, subscription.body).toBe(201);
      const event = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
      expect(event.statusCode, event.body).toBe(201);
      const deliveries = async () =>
        (await api(t, 'GET', `/v1/events/${event.data.id}/deliveries`)).data.data as any[];
      const settings = { ...defaultWebhookSettings('sandbox'), timeoutMs: LONG_WEBHOOK_TIMEOUT_MS };
      const options = {
        settings,
        sender: httpWebhookSender({ timeoutMs: settings.timeoutMs, blockReservedAddresses: false }),
        random: () => 0.5,
      };
      const errors: unknown[] = [];
      const first = startWebhookDispatcher(t.deps, options, (e) => errors.push(e));
      await waitFor('the first send to arrive', () => receiver.state.arrivals === 1);
      expect((await deliveries())[0]).toMatchObject({ status: 'delivering', attempts: 1 });

      const stopStartedAt = Date.now();
      await first.stop();
      const stopMs = Date.now() - stopStartedAt;
      expect(stopMs).toBeGreaterThanOrEqual(WORKER_HAND_BACK_AFTER_MS - 50);
      expect(stopMs).toBeLessThan(WORKER_HAND_BACK_AFTER_MS + STOP_SLACK_MS);
      // Released: the claim's attempt undone, due now, no lease left to wait out.
      expect((await deliveries())[0]).toMatchObject({ status: 'pending', attempts: 0 });
      const [row] = await t.deps.store.query<{ lease_expires_at: unknown }>(
        'SELECT lease_expires_at FROM webhook_deliveries WHERE event_id = $1',
        [event.data.id],
      );
      expect(row?.lease_expires_at).toBeNull();

      receiver.state.hang = false;
      const second = startWebhookDispatcher(t.deps, options, (e) => errors.push(e));
      const takenOverAt = Date.now();
      try {
        await waitFor('the second dispatcher to deliver', async () => {
          return (await deliveries())[0]?.status === 'succeeded';
        });
      } finally {
        await second.stop();
      }
      // Long before the first claim's lease (the send time-out + 5 s) would have run out.
      expect(Date.now() - takenOverAt).toBeLessThan(LONG_WEBHOOK_TIMEOUT_MS / 4);
      expect((await deliveries())[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(errors).toEqual([]);
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${subscription.data.id}`);
    } finally {
      await receiver.close();
    }
  });

  it('the rail worker stops between transfers, and hands back the one whose rail call is still open', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
      });
      expect(created.statusCode, created.body).toBe(201);
      ids.push(created.data.id);
    }
    const key = await findApiKeyByHash(t.deps.store, hashApiKey(t.key));
    const records = async () => {
      const rows = await listTransfers(t.deps.store, key?.organizationId as string, { walletId: wallet }, 10);
      return new Map(rows.map((r) => [r.id, r]));
    };
    const signals = stopSignals();
    let submits = 0;
    let pass: Promise<number> = Promise.resolve(0);
    // The partner never answers: the process is told to stop while the first call is open.
    const hanging: RailAdapter = {
      submit: () => {
        submits += 1;
        void signals.stop(pass);
        return new Promise(() => {});
      },
      check: async () => ({ kind: 'settled' }),
    };
    const startedAt = Date.now();
    pass = runRailWorkerOnce(t.deps, everyRail(hanging), { concurrency: 1, ...signals });
    const looked = await pass;
    const passMs = Date.now() - startedAt;
    expect(looked).toBe(1);
    expect(submits).toBe(1);
    expect(passMs).toBeGreaterThanOrEqual(WORKER_HAND_BACK_AFTER_MS - 50);
    expect(passMs).toBeLessThan(WORKER_HAND_BACK_AFTER_MS + STOP_SLACK_MS);
    const after = await records();
    const handedBack = [...after.values()].filter((r) => r.status === 'processing');
    expect(handedBack).toHaveLength(1);
    expect(handedBack[0]?.railReference).toBeNull();
    // Due at once, not at the end of its lease (RAIL_CLAIM_LEASE_MS).
    expect(handedBack[0]?.nextRailCheckAt?.getTime()).toBeLessThanOrEqual(Date.now());
    expect([...after.values()].filter((r) => r.status === 'pending')).toHaveLength(2);

    // The next worker takes all three at once, the handed-back one under the same idempotency reference.
    const references: string[] = [];
    const prompt: RailAdapter = {
      submit: async (request, now) => {
        references.push(request.idempotencyReference);
        return { accepted: true, reference: `payout_${request.transfer.id}`, checkAt: now };
      },
      check: async () => ({ kind: 'settled' }),
    };
    expect(await runRailWorkerOnce(t.deps, everyRail(prompt), { concurrency: 1 })).toBe(3);
    expect(references.sort()).toEqual([...ids].sort());
  });
});

describe('MKOBA_SHUTDOWN_DRAIN_MS', () => {
  it('defaults to no drain and takes whole milliseconds up to its maximum', () => {
    expect(loadConfig({}).shutdownDrainMs).toBe(SHUTDOWN_DRAIN_MS_DEFAULT);
    expect(loadConfig({ MKOBA_SHUTDOWN_DRAIN_MS: '750' }).shutdownDrainMs).toBe(750);
    for (const bad of ['-1', '1.5', 'soon', '120001']) {
      expect(() => loadConfig({ MKOBA_SHUTDOWN_DRAIN_MS: bad }), bad).toThrow(ConfigError);
    }
  });
});

describe('handing back', () => {
  it('a long-lived hand-back signal keeps no listener of a send that finished, and still hands back one that has not', async () => {
    const handBack = new AbortController();
    for (let i = 0; i < 1_000; i++) {
      expect(await unlessHandedBack(Promise.resolve(i), handBack.signal)).toBe(i);
      await expect(unlessHandedBack(Promise.reject(new Error('failed')), handBack.signal)).rejects.toThrow(
        'failed',
      );
    }
    expect(getEventListeners(handBack.signal, 'abort')).toHaveLength(0);
    const hanging = unlessHandedBack(new Promise(() => {}), handBack.signal);
    expect(getEventListeners(handBack.signal, 'abort')).toHaveLength(1);
    handBack.abort();
    expect(await hanging).toBe('handed_back');
  });
});
