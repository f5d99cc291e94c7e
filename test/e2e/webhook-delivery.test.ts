/**
 * At-least-once webhook delivery with real processes: a dispatcher killed with SIGKILL in the middle of a
 * burst, then started again, still gets every event to the receiver, and a repeat is the same event (same
 * `id`, same bytes). Without a kill, dispatchers running side by side deliver each event exactly once.
 *
 * The receiver is slow (RECEIVER_DELAY_MS per answer) and the kill is sent from inside its request handler
 * once KILL_AFTER_RECEIVED requests have arrived, so the kill always lands mid-burst with at least that
 * last request unanswered: its delivery must be sent again once its lease runs out (the send time-out,
 * MKOBA_WEBHOOK_TIMEOUT_MS, plus the dispatcher's margin). Repeats are bounded by what one subscription may
 * have in flight (WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX).
 *
 * On PostgreSQL (TEST_DATABASE_URL): `mkoba worker` processes against a fresh schema, fed by the app in
 * this process (which runs no dispatcher). On the embedded database: `mkoba serve`, which runs the
 * dispatcher beside the API.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import { verifySignatureHeader } from '../../src/domain/signing.ts';
import { WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX } from '../../src/domain/webhooks.ts';
import { api, startTestApp, TEST_DATABASE_URL, type TestApp } from '../support/harness.ts';
import { type Received, type Receiver, startReceiver } from '../support/receiver.ts';
import {
  http,
  killAllMkobaProcesses,
  type MkobaProcess,
  MkobaProcesses,
  mkobaEnv,
  READINESS_LAST_RESORT_MS,
  temporaryDataDir,
  waitForBanner,
  withTimeout,
} from './mkobaProcess.ts';

const BURST_EVENTS = 120;
const RECEIVER_DELAY_MS = 50;
const KILL_AFTER_RECEIVED = 30;
/** Small, so that a killed dispatcher's leases (time-out + margin) run out quickly. */
const WEBHOOK_TIMEOUT_MS = 1_000;
/** Requests the burst is created with at once. */
const BURST_CONCURRENCY = 10;
const DELIVERY_WAIT_MS = 90_000;
const STATUS_POLL_INTERVAL_MS = 200;
const TEST_TIMEOUT_MS = 4 * READINESS_LAST_RESORT_MS;

afterAll(killAllMkobaProcesses);

/** `count` sandbox test events of every type in turn, created BURST_CONCURRENCY at a time; their ids. */
async function burst(count: number, emit: (type: string) => Promise<string>): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += BURST_CONCURRENCY) {
    const size = Math.min(BURST_CONCURRENCY, count - start);
    ids.push(
      ...(await Promise.all(
        Array.from({ length: size }, (_, i) => emit(EVENT_TYPES[(start + i) % EVENT_TYPES.length] as string)),
      )),
    );
  }
  expect(new Set(ids).size).toBe(count);
  return ids;
}

/** Kills `target()` with SIGKILL from inside the receiver once `after` requests have arrived; answers slowly. */
function killMidBurst(
  receiver: Receiver,
  after: number,
  target: () => MkobaProcess | undefined,
): { killed: () => boolean } {
  let killed = false;
  receiver.respond = () => {
    const victim = target();
    if (!killed && victim !== undefined && receiver.received.length >= after) {
      killed = true;
      victim.child.kill('SIGKILL');
    }
    return { status: 200, delayMs: RECEIVER_DELAY_MS };
  };
  return { killed: () => killed };
}

function slowReceiver(receiver: Receiver): void {
  receiver.respond = () => ({ status: 200, delayMs: RECEIVER_DELAY_MS });
}

async function waitFor(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + DELIVERY_WAIT_MS;
  while (!(await condition())) {
    if (Date.now() >= deadline) throw new Error(`timed out after ${DELIVERY_WAIT_MS} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_INTERVAL_MS));
  }
}

/**
 * Every event arrived at least once, nothing else arrived, and every arrival of one event is that event:
 * the same id in the body and in Service-Event-Id, the same bytes each time, and a valid signature.
 * Returns the ids that arrived more than once.
 */
function expectEveryEventDelivered(
  received: readonly Received[],
  eventIds: readonly string[],
  secret: string,
) {
  const byId = new Map<string, Received[]>();
  for (const request of received) {
    const id = JSON.parse(request.body).id as string;
    expect(request.headers['service-event-id']).toBe(id);
    const check = verifySignatureHeader(
      request.body,
      request.headers['service-signature'] as string,
      [secret],
      Math.floor(Date.now() / 1000),
    );
    expect(check, id).toMatchObject({ ok: true });
    byId.set(id, [...(byId.get(id) ?? []), request]);
  }
  expect([...byId.keys()].sort()).toEqual([...eventIds].sort());
  const repeated: string[] = [];
  for (const [id, requests] of byId) {
    if (requests.length === 1) continue;
    repeated.push(id);
    for (const request of requests) expect(request.body).toBe(requests[0]?.body);
  }
  return repeated;
}

function expectNoWorkerErrors(process_: MkobaProcess): void {
  expect(process_.stderr()).not.toMatch(/failed:/);
}

describe.runIf(TEST_DATABASE_URL)('webhook delivery with mkoba worker processes on PostgreSQL', () => {
  const mkoba = new MkobaProcesses();
  afterAll(() => mkoba.killAll());

  /** A fresh schema with the sandbox seeded, a slow receiver subscribed to everything, and a burst in the outbox. */
  async function world() {
    // The receiver listens on 127.0.0.1: local development's opt-in, here and in the workers.
    const t = await startTestApp('postgres', 'sandbox', { allowPrivateWebhookUrls: true });
    const receiver = await startReceiver();
    slowReceiver(receiver);
    const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['*'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const eventIds = await burst(BURST_EVENTS, async (type) => {
      const response = await api(t, 'POST', '/v1/sandbox/events', { body: { type } });
      expect(response.statusCode, response.body).toBe(201);
      return response.data.id as string;
    });
    const url = t.db.url as string;
    const env = mkobaEnv({
      DATABASE_URL: url,
      MKOBA_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
      MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
      // The workers open the secrets this process sealed.
      MKOBA_ENCRYPTION_KEY: t.encryptionKey,
    });
    return {
      t,
      receiver,
      secret: subscription.data.secret as string,
      eventIds,
      startWorker: async () => {
        const worker = await mkoba.start(['worker'], env);
        await worker.waitForStderr(/mkoba worker running/);
        return worker;
      },
      allSucceeded: () => allDeliveriesSucceeded(t),
      async close() {
        await receiver.close();
        await t.close();
      },
    };
  }

  async function allDeliveriesSucceeded(t: TestApp): Promise<boolean> {
    const pending = await api(t, 'GET', '/v1/events?delivery_success=false&limit=1');
    expect(pending.statusCode).toBe(200);
    return pending.data.data.length === 0;
  }

  it('a worker killed with SIGKILL mid-burst and started again delivers every event at least once; repeats are the same event', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const w = await world();
    try {
      let worker: MkobaProcess | undefined;
      const kill = killMidBurst(w.receiver, KILL_AFTER_RECEIVED, () => worker);
      worker = await w.startWorker();
      const first = worker;
      expect(await withTimeout(first.exited, DELIVERY_WAIT_MS, 'the worker was not killed')).toMatchObject({
        signal: 'SIGKILL',
      });
      expect(kill.killed()).toBe(true);
      const receivedBeforeRestart = w.receiver.received.length;
      expect(receivedBeforeRestart).toBeGreaterThanOrEqual(KILL_AFTER_RECEIVED);
      expect(receivedBeforeRestart).toBeLessThan(BURST_EVENTS);
      expect(await w.allSucceeded()).toBe(false);

      const second = await w.startWorker();
      await waitFor(w.allSucceeded, 'every delivery to succeed after the restart');
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expectNoWorkerErrors(first);
      expectNoWorkerErrors(second);

      const repeated = expectEveryEventDelivered(w.receiver.received, w.eventIds, w.secret);
      // The request that triggered the kill was still unanswered: it must have been sent again.
      expect(repeated.length).toBeGreaterThanOrEqual(1);
      expect(repeated.length).toBeLessThanOrEqual(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
      expect(w.receiver.received.length).toBe(BURST_EVENTS + repeated.length);
      // The delivery log counts the attempt the kill interrupted.
      const deliveries = await api(w.t, 'GET', `/v1/events/${repeated[0]}/deliveries`);
      expect(deliveries.data.data).toHaveLength(1);
      expect(deliveries.data.data[0]).toMatchObject({ status: 'succeeded', last_status_code: 200 });
      expect(deliveries.data.data[0].attempts).toBeGreaterThanOrEqual(2);
    } finally {
      await w.close();
    }
  });

  it('two workers at once deliver each event exactly once', { timeout: TEST_TIMEOUT_MS }, async () => {
    const w = await world();
    try {
      const workers = await Promise.all([w.startWorker(), w.startWorker()]);
      await waitFor(w.allSucceeded, 'every delivery to succeed');
      for (const worker of workers) {
        expect(await worker.stop('SIGTERM')).toEqual({ code: 0, signal: null });
        expectNoWorkerErrors(worker);
      }
      expect(expectEveryEventDelivered(w.receiver.received, w.eventIds, w.secret)).toEqual([]);
      expect(w.receiver.received).toHaveLength(BURST_EVENTS);
    } finally {
      await w.close();
    }
  });

  it('two workers, one killed mid-burst: the other takes over its leases; repeats stay within what was in flight', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const w = await world();
    try {
      let victim: MkobaProcess | undefined;
      const kill = killMidBurst(w.receiver, KILL_AFTER_RECEIVED, () => victim);
      // The victim is known before it can deliver anything, so the kill never finds it unset.
      const a = await w.startWorker();
      victim = a;
      const b = await w.startWorker();
      await waitFor(w.allSucceeded, 'every delivery to succeed with one worker left');
      expect(kill.killed()).toBe(true);
      expect(await a.exited).toMatchObject({ signal: 'SIGKILL' });
      expect(await b.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      expectNoWorkerErrors(a);
      expectNoWorkerErrors(b);

      const repeated = expectEveryEventDelivered(w.receiver.received, w.eventIds, w.secret);
      expect(repeated.length).toBeLessThanOrEqual(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
      expect(w.receiver.received.length).toBe(BURST_EVENTS + repeated.length);
    } finally {
      await w.close();
    }
  });
});

describe('webhook delivery on the embedded database: mkoba serve killed mid-burst and started again', () => {
  const mkoba = new MkobaProcesses();
  const data = temporaryDataDir();
  const env = mkobaEnv({
    MKOBA_DATA_DIR: data.dir,
    PORT: '0',
    MKOBA_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    // The receiver listens on 127.0.0.1: local development's opt-in.
    MKOBA_WEBHOOK_ALLOW_PRIVATE: '1',
  });
  afterAll(async () => {
    await mkoba.killAll();
    data.remove();
  });

  it('delivers every event at least once; repeats are the same event', {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    const receiver = await startReceiver();
    try {
      let server = await mkoba.start(['serve'], env);
      let banner = await waitForBanner(server);
      const key = banner.sandboxApiKey as string;

      // The burst goes into the outbox first; recovery then queues all of it at once, so the dispatcher
      // is mid-burst from its first tick.
      const emitted: { id: string; created_at: string }[] = [];
      const eventIds = await burst(BURST_EVENTS, async (type) => {
        const response = await http('POST', `${banner.baseUrl}/sandbox/events`, key, { type });
        expect(response.status).toBe(201);
        emitted.push(response.body);
        return response.body.id as string;
      });
      const subscription = await http('POST', `${banner.baseUrl}/webhook-subscriptions`, key, {
        url: receiver.url,
        events: ['*'],
      });
      expect(subscription.status).toBe(201);
      const secret = subscription.body.secret as string;

      const first = server;
      const kill = killMidBurst(receiver, KILL_AFTER_RECEIVED, () => first);
      const since = emitted.map((e) => e.created_at).sort()[0];
      const recovered = await http(
        'POST',
        `${banner.baseUrl}/webhook-subscriptions/${subscription.body.id}/recover`,
        key,
        { since },
      );
      expect(recovered.status).toBe(202);
      expect(recovered.body.requeued).toBe(BURST_EVENTS);

      expect(await withTimeout(first.exited, DELIVERY_WAIT_MS, 'the server was not killed')).toMatchObject({
        signal: 'SIGKILL',
      });
      expect(kill.killed()).toBe(true);
      expect(receiver.received.length).toBeLessThan(BURST_EVENTS);

      server = await mkoba.start(['serve'], env);
      banner = await waitForBanner(server);
      const allSucceeded = async () => {
        const pending = await http('GET', `${banner.baseUrl}/events?delivery_success=false&limit=1`, key);
        expect(pending.status).toBe(200);
        return pending.body.data.length === 0;
      };
      await waitFor(allSucceeded, 'every delivery to succeed after the restart');
      expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const repeated = expectEveryEventDelivered(receiver.received, eventIds, secret);
      expect(repeated.length).toBeGreaterThanOrEqual(1);
      expect(repeated.length).toBeLessThanOrEqual(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
      expect(receiver.received.length).toBe(BURST_EVENTS + repeated.length);
    } finally {
      await receiver.close();
    }
  });
});
