/**
 * What makes delivery prompt and cheap: a commit that queues deliveries notifies the dispatchers
 * (LISTEN/NOTIFY, PGlite's in-process notify) so they need not poll, and the sender keeps connections to an
 * endpoint alive and reuses them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWebhookSettings, WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX } from '../src/config/webhooks.ts';
import { loadConfig } from '../src/config.ts';
import {
  type DispatcherOptions,
  startWebhookDispatcher,
} from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { insertDeliveries, WEBHOOK_DELIVERIES_CHANNEL } from '../src/store/repositories/outbox.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const HOUR_MS = 3_600_000;
const WAIT_MS_MAX = 15_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, done: () => boolean): Promise<void> {
  const until = Date.now() + WAIT_MS_MAX;
  while (!done()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe.each(BACKENDS)('webhook wake-up on %s', (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('a transaction that queues deliveries notifies listeners at its commit, not before', async () => {
    let notified = 0;
    const unlisten = await t.deps.store.listen?.(WEBHOOK_DELIVERIES_CHANNEL, () => notified++);
    expect(unlisten).toBeDefined();
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    try {
      const event = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
      expect(event.statusCode, event.body).toBe(201);
      await waitFor('the notification of the emitted event', () => notified > 0);

      const before = notified;
      let insideTransaction = -1;
      await t.deps.store.transaction(async (tx) => {
        await insertDeliveries(
          tx,
          [
            {
              id: t.deps.newId('webhookDelivery'),
              organizationId: t.organizationId,
              eventId: event.data.id,
              subscriptionId: response.data.id,
            },
          ],
          t.deps.now(),
        );
        await sleep(50);
        insideTransaction = notified;
      });
      expect(insideTransaction).toBe(before);
      await waitFor('the notification at commit', () => notified > before);
    } finally {
      await unlisten?.();
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${response.data.id}`);
    }
  });

  it('a running dispatcher sends each event on its commit, with its poll an hour away', async () => {
    receiver.received.length = 0;
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    const settings = { ...defaultWebhookSettings('sandbox'), pollIntervalMs: HOUR_MS };
    const options: DispatcherOptions = {
      settings,
      sender: httpWebhookSender({ timeoutMs: settings.timeoutMs, blockReservedAddresses: false }),
    };
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher(t.deps, options, (error) => errors.push(error));
    try {
      // One at a time, each after the last arrived: only a wake-up can bring the next one.
      const sent: string[] = [];
      for (let i = 0; i < 5; i++) {
        const event = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
        expect(event.statusCode, event.body).toBe(201);
        sent.push(event.data.id);
        await waitFor(`event ${i + 1}`, () =>
          receiver.received.some((r) => r.headers['service-event-id'] === event.data.id),
        );
      }
      expect(receiver.received.map((r) => r.headers['service-event-id'])).toEqual(sent);
    } finally {
      await dispatcher.stop();
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${response.data.id}`);
    }
    expect(errors).toEqual([]);
    // Each committed outcome is counted for /metrics.
    const counted = await t.deps.metrics?.registry.getSingleMetricAsString('mkoba_webhook_deliveries_total');
    const succeeded = /mkoba_webhook_deliveries_total\{outcome="succeeded"\} (\d+)/.exec(counted ?? '')?.[1];
    expect(Number(succeeded)).toBeGreaterThanOrEqual(5);
  });
  it('a wake-up that finds every slot taken still refills the slot when its send finishes, with the poll an hour away', async () => {
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    const settings = {
      ...defaultWebhookSettings('sandbox'),
      pollIntervalMs: HOUR_MS,
      subscriptionConcurrency: 1,
    };
    const sentTo: string[] = [];
    let releaseFirst: () => void = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    // The first send is held, so its delivery keeps the subscription's only slot.
    const sender: DispatcherOptions['sender'] = async (_url, _body, headers) => {
      sentTo.push(String(headers['service-event-id']));
      if (sentTo.length === 1) await firstHeld;
      return { kind: 'response', statusCode: 200, body: 'ok', retryAfterSeconds: undefined };
    };
    // Follows the dispatcher's transactions: a claim is one, and nothing else runs while the slot is held.
    let settled = 0;
    let running = 0;
    const store = t.deps.store;
    const counted = {
      ...store,
      driver: store.driver,
      query: store.query.bind(store),
      exec: store.exec.bind(store),
      close: store.close.bind(store),
      listen: store.listen?.bind(store),
      transaction: (async (fn) => {
        running++;
        try {
          return await store.transaction(fn);
        } finally {
          running--;
          settled++;
        }
      }) as typeof store.transaction,
    };
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher({ ...t.deps, store: counted }, { settings, sender }, (error) =>
      errors.push(error),
    );
    try {
      const first = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
      expect(first.statusCode, first.body).toBe(201);
      await waitFor('the first send', () => sentTo.length === 1);
      // The second event's commit wakes the dispatcher; its claim queues the delivery behind the held send.
      const settledBefore = settled;
      const second = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
      expect(second.statusCode, second.body).toBe(201);
      // Every claim that commit woke has finished, and none is running: the only slot stays taken.
      await waitFor('the claim the second commit woke', () => settled > settledBefore && running === 0);
      await sleep(200);
      expect(running).toBe(0);
      expect(sentTo).toEqual([first.data.id]);
      // Once the held send is done, its slot is refilled at once: no wait for the poll.
      releaseFirst();
      await waitFor('the second send', () => sentTo.length === 2);
      expect(sentTo).toEqual([first.data.id, second.data.id]);
    } finally {
      releaseFirst();
      await dispatcher.stop();
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${response.data.id}`);
    }
    expect(errors).toEqual([]);
  });
});

describe('webhook connections', () => {
  let server: http.Server;
  let url: string;
  let connections = 0;
  let requests = 0;
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      requests++;
      request.resume();
      request.on('end', () => response.end('ok'));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('several deliveries to one endpoint share one kept-alive connection', async () => {
    const send = httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: false });
    for (let i = 0; i < 5; i++) {
      const result = await send(url, '{}', { 'content-type': 'application/json' });
      expect(result).toMatchObject({ kind: 'response', statusCode: 200 });
    }
    expect(requests).toBe(5);
    expect(connections).toBe(1);
  });

  it('a blocking sender still refuses a loopback receiver on a fresh connection', async () => {
    const send = httpWebhookSender({ timeoutMs: 5_000, blockReservedAddresses: true });
    const before = requests;
    const result = await send(url.replace('127.0.0.1', 'localhost'), '{}', {});
    expect(result).toMatchObject({ kind: 'error', errorClass: 'blocked_address' });
    expect(requests).toBe(before);
  });
});

describe('MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY', () => {
  it('sets how many deliveries one subscription has in flight, within bounds', () => {
    expect(loadConfig({}).webhooks.subscriptionConcurrency).toBe(4);
    expect(
      loadConfig({ MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY: '16' }).webhooks.subscriptionConcurrency,
    ).toBe(16);
    expect(
      loadConfig({ MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY: String(WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX) })
        .webhooks.subscriptionConcurrency,
    ).toBe(WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX);
    for (const bad of ['0', String(WEBHOOK_SUBSCRIPTION_CONCURRENCY_MAX + 1), '2.5', 'many']) {
      expect(() => loadConfig({ MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY: bad })).toThrow(
        /MKOBA_WEBHOOK_SUBSCRIPTION_CONCURRENCY/,
      );
    }
  });
});
