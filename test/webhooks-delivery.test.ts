/**
 * Webhook delivery against real receivers on 127.0.0.1: time-outs, refused connections, an exhausted
 * schedule, auto-disable after failing too long with nothing dropped, leases (expiry, re-claim, a
 * redeliver during an attempt), fan-out to disabled and deleted subscriptions, secret rotation, and the
 * long-running dispatcher keeping one slow endpoint from delaying the others. Then poison deliveries:
 * binary, endless and malformed answers, exceptions between claim and outcome, outcomes that cannot be
 * recorded, more live secrets than a header carries, and claims that spent the schedule unrecorded.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../src/app/deps.ts';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import {
  formatWebhookSecret,
  verifySignatureHeader,
  WEBHOOK_SIGNING_SECRETS_MAX,
} from '../src/domain/signing.ts';
import {
  WEBHOOK_RESPONSE_BODY_CHARS_MAX,
  WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
} from '../src/domain/webhooks.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { claimDueDeliveries } from '../src/modules/webhooks/repository/claims.ts';
import { finishDelivery } from '../src/modules/webhooks/repository/deliveries.ts';
import { activeSecrets, rotateSecret } from '../src/modules/webhooks/repository/secrets.ts';
import { findSubscription } from '../src/modules/webhooks/repository/subscriptions.ts';
import { sealWebhookSecret } from '../src/modules/webhooks/useCases/subscriptions.ts';
import {
  type DispatcherOptions,
  dispatchWebhooksOnce,
  startWebhookDispatcher,
} from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender, type WebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { insertDeliveries } from '../src/store/repositories/outbox.ts';
import type { Store } from '../src/store/store.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

/** Every wait in this file is bounded by this. */
const WAIT_MS_MAX = 20_000;
/** A send time-out long enough that a prompt receiver never meets it, even on a loaded machine. */
const PROMPT_TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS_MAX;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${WAIT_MS_MAX} ms waiting for ${what}`);
    await sleep(20);
  }
}

interface Arrival {
  path: string;
  eventId: string;
  signature: string;
  body: string;
}

interface TimelineEntry {
  receiver: string;
  kind: 'arrived' | 'closed';
}

/**
 * A receiver that answers with `status()` and `body()` at once, or never (`hang`: the request stays open
 * until the sender gives up), or with a 200 whose body never ends (`stream`), and counts how many requests
 * it has open at a time.
 */
interface TestReceiver {
  url: string;
  arrivals: Arrival[];
  status: () => number | 'hang' | 'stream';
  body: () => string | Buffer;
  open: number;
  openMax: number;
  close(): Promise<void>;
}

async function startTestReceiver(name: string, timeline: TimelineEntry[] = []): Promise<TestReceiver> {
  const receiver: TestReceiver = {
    url: '',
    arrivals: [],
    status: () => 200,
    body: () => 'ok',
    open: 0,
    openMax: 0,
    close: async () => {},
  };
  const server = http.createServer((request, response) => {
    receiver.open++;
    receiver.openMax = Math.max(receiver.openMax, receiver.open);
    timeline.push({ receiver: name, kind: 'arrived' });
    response.on('close', () => {
      receiver.open--;
      timeline.push({ receiver: name, kind: 'closed' });
    });
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      receiver.arrivals.push({
        path: request.url ?? '',
        eventId: String(request.headers['service-event-id']),
        signature: String(request.headers['service-signature']),
        body,
      });
      const status = receiver.status();
      if (status === 'hang') return;
      if (status === 'stream') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const more = () => {
          if (!response.destroyed) response.write('x'.repeat(16_384), () => setImmediate(more));
        };
        more();
        return;
      }
      response.writeHead(status);
      response.end(receiver.body());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The store with its transactions run through `transaction` (to hold one up, or to fail some). */
function withTransaction(store: Store, transaction: Store['transaction']): Store {
  return {
    driver: store.driver,
    query: (sql, params) => store.query(sql, params),
    exec: (sql) => store.exec(sql),
    close: () => store.close(),
    transaction,
  };
}

function options(settings: Partial<DispatcherOptions['settings']> = {}, sender?: WebhookSender) {
  const merged = { ...defaultWebhookSettings('sandbox'), timeoutMs: PROMPT_TIMEOUT_MS, ...settings };
  return {
    settings: merged,
    sender: sender ?? httpWebhookSender({ timeoutMs: merged.timeoutMs, blockReservedAddresses: false }),
    random: () => 0.5,
  } satisfies DispatcherOptions;
}

describe.each(BACKENDS)('webhook delivery on %s', (backend) => {
  let t: TestApp;
  let receiver: TestReceiver;
  /** Subscriptions to delete after each test, so no later drain claims their leftovers. */
  let created: { id: string; key: string }[] = [];
  let organizations = 0;

  beforeAll(async () => {
    // The receivers listen on 127.0.0.1: local development's opt-in (MKOBA_WEBHOOK_ALLOW_PRIVATE=1).
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    receiver = await startTestReceiver('main');
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });
  afterEach(async () => {
    for (const s of created) await api(t, 'DELETE', `/v1/webhook-subscriptions/${s.id}`, { key: s.key });
    created = [];
    receiver.arrivals.length = 0;
    receiver.status = () => 200;
    receiver.body = () => 'ok';
  });

  /** A fresh organization, so a test sees only its own events and subscriptions. */
  async function organization() {
    const issued = await issueApiKey(t.deps, { organizationName: `Delivery ${backend} ${++organizations}` });
    return { key: issued.key, organizationId: issued.record.organizationId };
  }

  async function subscribe(key: string, url = receiver.url, events = ['transfer.created']) {
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', { key, body: { url, events } });
    expect(response.statusCode, response.body).toBe(201);
    created.push({ id: response.data.id, key });
    return response.data as { id: string; secret: string };
  }

  async function emit(key: string, type = 'transfer.created'): Promise<string> {
    const response = await api(t, 'POST', '/v1/sandbox/events', { key, body: { type } });
    expect(response.statusCode, response.body).toBe(201);
    return response.data.id;
  }

  async function deliveries(key: string, eventId: string): Promise<any[]> {
    const response = await api(t, 'GET', `/v1/events/${eventId}/deliveries`, { key });
    expect(response.statusCode, response.body).toBe(200);
    return response.data.data;
  }

  async function drain(
    opts: DispatcherOptions,
    passesMax = 10,
    deps: Deps = t.deps,
    onError?: (error: unknown) => void,
  ): Promise<void> {
    for (let i = 0; i < passesMax; i++) if ((await dispatchWebhooksOnce(deps, opts, onError)) === 0) return;
  }

  it('a receiver slower than the time-out is logged as timeout, and a retry is scheduled', async () => {
    const { key } = await organization();
    const slow = await startTestReceiver('slow');
    slow.status = () => 'hang';
    try {
      await subscribe(key, slow.url);
      const eventId = await emit(key);
      expect(
        await dispatchWebhooksOnce(t.deps, options({ timeoutMs: 300, retryScheduleSeconds: [60] })),
      ).toBe(1);
      expect(slow.arrivals).toHaveLength(1);
      const [delivery] = await deliveries(key, eventId);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
      expect(delivery.last_error).toMatch(/^timeout: /);
      expect(delivery.attempt_log).toEqual([
        expect.objectContaining({ attempt: 1, status_code: null, error_class: 'timeout' }),
      ]);
      expect(delivery.attempt_log[0].duration_ms).toBeGreaterThanOrEqual(295);
      const wait = Date.parse(delivery.next_attempt_at) - Date.parse(delivery.last_attempt_at);
      expect(wait).toBe(60_000);
    } finally {
      await slow.close();
    }
  });

  it('a refused connection is logged as connection, and a retry is scheduled', async () => {
    const { key } = await organization();
    await subscribe(key, `http://127.0.0.1:${await closedPort()}/hooks`);
    const eventId = await emit(key);
    await dispatchWebhooksOnce(t.deps, options({ retryScheduleSeconds: [60] }));
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: null, error_class: 'connection' }),
    ]);
  });

  it('a spent schedule leaves the delivery exhausted and the event listed as undelivered; redeliver starts afresh', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    receiver.status = () => 500;
    const eventId = await emit(key);
    const opts = options({ retryScheduleSeconds: [0, 0] });
    await drain(opts);
    const [exhausted] = await deliveries(key, eventId);
    expect(exhausted).toMatchObject({ status: 'exhausted', attempts: 3, last_status_code: 500 });
    expect(exhausted.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 500]);
    const undelivered = await api(t, 'GET', '/v1/events?delivery_success=false', { key });
    expect(undelivered.data.data.map((e: { id: string }) => e.id)).toContain(eventId);
    const delivered = await api(t, 'GET', '/v1/events?delivery_success=true', { key });
    expect(delivered.data.data.map((e: { id: string }) => e.id)).not.toContain(eventId);
    // Exhausting one delivery does not disable the endpoint (that takes failing for the disable period).
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${subscription.id}`, { key })).data.status).toBe(
      'enabled',
    );

    // A redelivered delivery gets the whole schedule again, not a single attempt.
    let calls = 0;
    receiver.status = () => (++calls === 1 ? 503 : 200);
    expect((await api(t, 'POST', `/v1/events/${eventId}/redeliver`, { key })).data.subscriptions).toBe(1);
    await drain(opts);
    const [redelivered] = await deliveries(key, eventId);
    expect(redelivered).toMatchObject({ status: 'succeeded', attempts: 5 });
    expect(redelivered.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([
      500, 500, 500, 503, 200,
    ]);
    const nowDelivered = await api(t, 'GET', '/v1/events?delivery_success=true', { key });
    expect(nowDelivered.data.data.map((e: { id: string }) => e.id)).toContain(eventId);
  });

  it('failing past the disable period disables the subscription with an event; nothing is dropped meanwhile', async () => {
    const { key, organizationId } = await organization();
    const subscription = await subscribe(key);
    const failingSince = async () =>
      (await findSubscription(t.deps.store, organizationId, subscription.id))?.failingSince ?? null;
    receiver.status = () => 500;
    const opts = options({ retryScheduleSeconds: [0, 0, 0, 0, 0], disableAfterFailingMs: 1_000 });
    const first = await emit(key);
    expect(await dispatchWebhooksOnce(t.deps, opts)).toBe(1);
    expect(await failingSince()).toBeInstanceOf(Date);
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${subscription.id}`, { key })).data.status).toBe(
      'enabled',
    );

    await sleep(1_100);
    expect(await dispatchWebhooksOnce(t.deps, opts)).toBe(1);
    const disabled = await api(t, 'GET', `/v1/webhook-subscriptions/${subscription.id}`, { key });
    expect(disabled.data).toMatchObject({ status: 'disabled', disabled_reason: 'failing_too_long' });
    const notices = await api(t, 'GET', '/v1/events?type=webhook_subscription.disabled', { key });
    expect(notices.data.data).toHaveLength(1);
    expect(notices.data.data[0].data).toMatchObject({
      subscription_id: subscription.id,
      reason: 'failing_too_long',
    });

    // While disabled: events are stored and listed, nothing is sent, and recover asks for enabling first.
    const during = [await emit(key), await emit(key)];
    const listed = await api(t, 'GET', '/v1/events?type=transfer.created', { key });
    expect(listed.data.data.map((e: { id: string }) => e.id)).toEqual(
      expect.arrayContaining([first, ...during]),
    );
    const sent = receiver.arrivals.length;
    await drain(opts);
    expect(receiver.arrivals).toHaveLength(sent);
    const since = new Date(Date.now() - 60_000).toISOString();
    const refused = await api(t, 'POST', `/v1/webhook-subscriptions/${subscription.id}/recover`, {
      key,
      body: { since },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.data.code).toBe('invalid_state_transition');

    // Enabled again and recovered: every event arrives.
    const enabled = await api(t, 'PATCH', `/v1/webhook-subscriptions/${subscription.id}`, {
      key,
      body: { status: 'enabled' },
    });
    expect(enabled.data).toMatchObject({ status: 'enabled', disabled_reason: null });
    expect(await failingSince()).toBeNull();
    receiver.status = () => 200;
    const recovered = await api(t, 'POST', `/v1/webhook-subscriptions/${subscription.id}/recover`, {
      key,
      body: { since },
    });
    expect(recovered.statusCode, recovered.body).toBe(202);
    expect(recovered.data.requeued).toBe(3);
    await drain(opts);
    for (const eventId of [first, ...during]) {
      expect((await deliveries(key, eventId))[0], eventId).toMatchObject({ status: 'succeeded' });
      expect(receiver.arrivals.map((a) => a.eventId)).toContain(eventId);
    }

    // One failure starts the failure window again; a success closes it.
    receiver.status = () => 500;
    await emit(key);
    await dispatchWebhooksOnce(t.deps, opts);
    expect(await failingSince()).toBeInstanceOf(Date);
    receiver.status = () => 200;
    await drain(opts);
    expect(await failingSince()).toBeNull();
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${subscription.id}`, { key })).data.status).toBe(
      'enabled',
    );
  });

  it('outcomes that finish together are recorded in one transaction, each as it would be alone', async () => {
    const { key, organizationId } = await organization();
    const failing = await subscribe(key);
    const healthy = await subscribe(key, `${receiver.url}?s=healthy`);
    const events = [await emit(key), await emit(key), await emit(key), await emit(key)];
    const answers = [500, 410, 200, 500];
    const answerOf = new Map(events.map((id, i) => [id, answers[i] as number]));
    // Every send of these events is held until all eight are in flight, then all answer at once.
    const held: (() => void)[] = [];
    const sender: WebhookSender = async (url, body) => {
      const eventId = String(JSON.parse(body).id);
      const status = url.includes('healthy') ? 200 : (answerOf.get(eventId) ?? 0);
      if (!answerOf.has(eventId)) {
        return { kind: 'response', statusCode: 200, body: 'ok', retryAfterSeconds: undefined };
      }
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length === 2 * events.length) for (const release of held) release();
      });
      return { kind: 'response', statusCode: status, body: `answer ${status}`, retryAfterSeconds: undefined };
    };
    const store = t.deps.store;
    let transactions = 0;
    const counting = withTransaction(store, (fn) => {
      transactions++;
      return store.transaction(fn);
    });
    const opts = options({ subscriptionConcurrency: 8, retryScheduleSeconds: [60] }, sender);
    expect(await dispatchWebhooksOnce({ ...t.deps, store: counting }, opts)).toBe(8);
    // The claim, then one transaction for all eight outcomes.
    expect(transactions).toBe(2);

    for (const [i, eventId] of events.entries()) {
      const rows = await deliveries(key, eventId);
      const status = answers[i] as number;
      expect(rows.find((d) => d.subscription === healthy.id)).toMatchObject({
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
        attempt_log: [expect.objectContaining({ attempt: 1, status_code: 200, response_body: 'answer 200' })],
      });
      expect(rows.find((d) => d.subscription === failing.id)).toMatchObject({
        status: status === 200 ? 'succeeded' : 'pending',
        attempts: 1,
        last_status_code: status,
        attempt_log: [
          expect.objectContaining({ attempt: 1, status_code: status, response_body: `answer ${status}` }),
        ],
      });
    }
    // The 410 disabled the failing endpoint, once; the healthy one was not touched.
    const failed = await findSubscription(t.deps.store, organizationId, failing.id);
    expect(failed).toMatchObject({ status: 'disabled', disabledReason: 'endpoint_gone' });
    expect(failed?.failingSince).toBeInstanceOf(Date);
    expect(await findSubscription(t.deps.store, organizationId, healthy.id)).toMatchObject({
      status: 'enabled',
      failingSince: null,
    });
    const notices = await api(t, 'GET', '/v1/events?type=webhook_subscription.disabled', { key });
    expect(notices.data.data).toHaveLength(1);
    expect(notices.data.data[0].data).toMatchObject({ subscription_id: failing.id, reason: 'endpoint_gone' });
  });

  it('in one batch of outcomes, a success closes the failure window, and an outcome whose lease was lost is only logged', async () => {
    const { key, organizationId } = await organization();
    const subscription = await subscribe(key);
    const failingSince = async () =>
      (await findSubscription(t.deps.store, organizationId, subscription.id))?.failingSince ?? null;
    receiver.status = () => 500;
    const failed = await emit(key);
    const opts = options({ subscriptionConcurrency: 8, retryScheduleSeconds: [3_600] });
    expect(await dispatchWebhooksOnce(t.deps, opts)).toBe(1);
    expect(await failingSince()).toBeInstanceOf(Date);

    const events = [await emit(key), await emit(key), await emit(key)];
    let stolen: { id: string; attempts: number }[] = [];
    const held: (() => void)[] = [];
    // All three sends are held; meanwhile the oldest one's lease runs out and another dispatcher claims it.
    const sender: WebhookSender = async () => {
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length === events.length) {
          const later = new Date(Date.now() + 3_600_000);
          void t.deps.store
            .transaction((tx) => claimDueDeliveries(tx, later, new Date(later.getTime() + 60_000), 1, 8))
            .then((claimed) => {
              stolen = claimed;
              for (const release of held) release();
            });
        }
      });
      return { kind: 'response', statusCode: 200, body: 'ok', retryAfterSeconds: undefined };
    };
    const store = t.deps.store;
    let transactions = 0;
    const counting = withTransaction(store, (fn) => {
      transactions++;
      return store.transaction(fn);
    });
    expect(await dispatchWebhooksOnce({ ...t.deps, store: counting }, { ...opts, sender })).toBe(3);
    expect(transactions).toBe(2);
    expect(stolen).toHaveLength(1);
    const [taken] = stolen;
    // The window the earlier failure opened is closed by the successes of the same batch.
    expect(await failingSince()).toBeNull();
    let lost = 0;
    for (const eventId of events) {
      const [delivery] = await deliveries(key, eventId);
      if (delivery.id === taken?.id) {
        lost++;
        expect(delivery).toMatchObject({ status: 'delivering', attempts: 2, succeeded_at: null });
        expect(delivery.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);
      } else {
        expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 200 });
      }
    }
    expect(lost).toBe(1);
    expect((await deliveries(key, failed))[0]).toMatchObject({ status: 'pending', last_status_code: 500 });
  });

  it('recover racing a batch of outcomes over the same deliveries: both finish, whichever locks first', async () => {
    const { key, organizationId } = await organization();
    const events: string[] = [];
    for (let i = 0; i < 16; i++) events.push(await emit(key));
    const subscription = await subscribe(key);
    // Delivery ids in the reverse of the events' order: recover meets the rows in event order, a batch of
    // outcomes in id order, so taken as they come their locks would cross.
    const ids = events.map(() => t.deps.newId('webhookDelivery')).reverse();
    await insertDeliveries(
      t.deps.store,
      events.map((eventId, i) => ({
        id: ids[i] as string,
        organizationId,
        eventId,
        subscriptionId: subscription.id,
      })),
      new Date(),
    );
    const since = new Date(Date.now() - 600_000).toISOString();
    const recover = () =>
      api(t, 'POST', `/v1/webhook-subscriptions/${subscription.id}/recover`, { key, body: { since } });
    for (let round = 0; round < 4; round++) {
      // Every delivery pending again, then claimed at once; when all sends are in flight, recover runs while
      // their outcomes are recorded.
      expect((await recover()).statusCode).toBe(202);
      const held: (() => void)[] = [];
      let racing: ReturnType<typeof recover> | undefined;
      const sender: WebhookSender = async () => {
        await new Promise<void>((resolve) => {
          held.push(resolve);
          if (held.length === events.length) {
            racing = recover();
            for (const release of held) release();
          }
        });
        return { kind: 'response', statusCode: 200, body: 'ok', retryAfterSeconds: undefined };
      };
      const errors: unknown[] = [];
      const opts = options({ subscriptionConcurrency: events.length }, sender);
      expect(await dispatchWebhooksOnce(t.deps, opts, (e) => errors.push(e))).toBe(events.length);
      const raced = await racing;
      expect(raced?.statusCode, raced?.body).toBe(202);
      expect(errors).toEqual([]);
    }
    // Whatever the order, every attempt was logged and each delivery is either done or queued again.
    for (const eventId of events) {
      const [delivery] = await deliveries(key, eventId);
      expect(delivery.attempt_log).toHaveLength(4);
      expect(['succeeded', 'pending']).toContain(delivery.status);
    }
  });

  it('disabled and deleted subscriptions get no new deliveries; redeliver and recover leave them alone', async () => {
    const { key } = await organization();
    const live = await subscribe(key, `${receiver.url}?s=live`);
    const paused = await subscribe(key, `${receiver.url}?s=paused`);
    const removed = await subscribe(key, `${receiver.url}?s=removed`);
    await api(t, 'PATCH', `/v1/webhook-subscriptions/${paused.id}`, { key, body: { status: 'disabled' } });
    const eventId = await emit(key);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${removed.id}`, { key });
    await drain(options());
    expect(receiver.arrivals.map((a) => a.path)).toEqual(['/hooks?s=live']);
    const rows = await deliveries(key, eventId);
    expect(rows.map((d) => [d.subscription, d.status]).sort()).toEqual(
      [
        [live.id, 'succeeded'],
        [removed.id, 'pending'],
      ].sort(),
    );

    const redelivered = await api(t, 'POST', `/v1/events/${eventId}/redeliver`, { key });
    expect(redelivered.data.subscriptions).toBe(1);
    await drain(options());
    expect(receiver.arrivals.map((a) => a.path)).toEqual(['/hooks?s=live', '/hooks?s=live']);
    const body = { since: new Date(Date.now() - 60_000).toISOString() };
    const disabledRecover = await api(t, 'POST', `/v1/webhook-subscriptions/${paused.id}/recover`, {
      key,
      body,
    });
    expect(disabledRecover.statusCode).toBe(409);
    const deletedRecover = await api(t, 'POST', `/v1/webhook-subscriptions/${removed.id}/recover`, {
      key,
      body,
    });
    expect(deletedRecover.statusCode).toBe(404);
  });

  it('claims at most the per-subscription limit, and more only as attempts finish', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    for (let i = 0; i < WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX + 2; i++) await emit(key);
    const claim = () =>
      t.deps.store.transaction(async (tx) =>
        (
          await claimDueDeliveries(
            tx,
            new Date(),
            new Date(Date.now() + 60_000),
            50,
            WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
          )
        ).filter((d) => d.subscriptionId === subscription.id),
      );
    const first = await claim();
    expect(first).toHaveLength(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
    expect(await claim()).toHaveLength(0);
    const done = first[0];
    if (!done) throw new Error('nothing claimed');
    const outcome = { status: 'succeeded' as const, nextAttemptAt: new Date(), statusCode: 200, error: null };
    expect(await finishDelivery(t.deps.store, done.id, done.attempts, outcome, new Date())).toBe(true);
    expect(await claim()).toHaveLength(1);
  });

  it('a redeliver while an attempt is in flight leaves it with its dispatcher, never sent twice at once', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    const eventId = await emit(key);
    const claim = (now: Date) =>
      t.deps.store.transaction(async (tx) =>
        (await claimDueDeliveries(tx, now, new Date(now.getTime() + 60_000), 50, 4)).filter(
          (d) => d.subscriptionId === subscription.id,
        ),
      );
    const [held] = await claim(new Date());
    if (!held) throw new Error('nothing claimed');
    expect((await api(t, 'POST', `/v1/events/${eventId}/redeliver`, { key })).statusCode).toBe(202);
    expect(await claim(new Date())).toHaveLength(0);
    expect((await deliveries(key, eventId))[0]).toMatchObject({ status: 'delivering', attempts: 1 });
    const outcome = { status: 'succeeded' as const, nextAttemptAt: new Date(), statusCode: 200, error: null };
    expect(await finishDelivery(t.deps.store, held.id, 1, outcome, new Date())).toBe(true);
    expect((await deliveries(key, eventId))[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('a lease that runs out is claimed again; the late attempt is logged but its outcome is not recorded', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    const eventId = await emit(key);
    let stolen: { id: string; attempts: number }[] = [];
    // While the first dispatcher is still sending, its lease expires and another dispatcher claims the row.
    const slowSender: WebhookSender = async () => {
      const later = new Date(Date.now() + 3_600_000);
      stolen = await t.deps.store.transaction((tx) =>
        claimDueDeliveries(tx, later, new Date(later.getTime() + 60_000), 50, 4),
      );
      return { kind: 'response', statusCode: 200, body: 'ok', retryAfterSeconds: undefined };
    };
    expect(await dispatchWebhooksOnce(t.deps, options({}, slowSender))).toBe(1);
    const [mine] = stolen.filter((d) => d.id === ((stolen[0] as { id: string } | undefined)?.id ?? ''));
    expect(stolen).toHaveLength(1);
    expect(mine?.attempts).toBe(2);
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ subscription: subscription.id, status: 'delivering', attempts: 2 });
    expect(delivery.succeeded_at).toBeNull();
    expect(delivery.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200 })]);

    const outcome = { status: 'succeeded' as const, nextAttemptAt: new Date(), statusCode: 200, error: null };
    expect(await finishDelivery(t.deps.store, delivery.id, 1, outcome, new Date())).toBe(false);
    expect(await finishDelivery(t.deps.store, delivery.id, 2, outcome, new Date())).toBe(true);
    expect((await deliveries(key, eventId))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it.skipIf(backend === 'pglite')(
    'a dispatcher holding a subscription lock does not hold up events fanning out to it',
    async () => {
      const { key, organizationId } = await organization();
      const subscription = await subscribe(key);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = t.deps.store.transaction(async (tx) => {
        await findSubscription(tx, organizationId, subscription.id, { forUpdate: true });
        locked();
        await held;
      });
      try {
        await lockTaken;
        const emitted = api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
        const outcome = await Promise.race([
          emitted.then((r) => r.statusCode),
          sleep(5_000).then(() => 'blocked' as const),
        ]);
        expect(outcome).toBe(201);
      } finally {
        release();
        await holder;
      }
    },
  );

  it('a rotation with no grace leaves only the new secret signing, even after an earlier rotation', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    const path = `/v1/webhook-subscriptions/${subscription.id}/rotate-secret`;
    const second = await api(t, 'POST', path, { key });
    expect(second.statusCode).toBe(200);
    const now = new Date();
    expect(await activeSecrets(t.deps.store, t.deps.keyring, subscription.id, now)).toHaveLength(2);
    expect(
      await activeSecrets(
        t.deps.store,
        t.deps.keyring,
        subscription.id,
        new Date(now.getTime() + 25 * 3_600_000),
      ),
    ).toEqual([second.data.secret]);

    const third = await api(t, 'POST', path, { key, body: { grace_period_hours: 0 } });
    expect(third.statusCode, third.body).toBe(200);
    await emit(key);
    await drain(options());
    const arrival = receiver.arrivals.at(-1);
    if (!arrival) throw new Error('nothing delivered');
    expect(arrival.signature.match(/v1=/g)).toHaveLength(1);
    const at = Math.floor(Date.now() / 1000);
    expect(verifySignatureHeader(arrival.body, arrival.signature, [third.data.secret], at).ok).toBe(true);
    for (const old of [subscription.secret, second.data.secret]) {
      expect(verifySignatureHeader(arrival.body, arrival.signature, [old], at).ok).toBe(false);
    }
  });

  it('stop() waits for a claim in progress and for the sends it starts', async () => {
    const { key } = await organization();
    await subscribe(key);
    const eventId = await emit(key);
    let entered = false;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const store = t.deps.store;
    const gated = withTransaction(store, async (fn) => {
      if (!entered) {
        entered = true;
        await gate;
      }
      return store.transaction(fn);
    });
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher({ ...t.deps, store: gated }, options(), (e) => errors.push(e));
    await waitFor('the first claim', () => entered);
    let stopped = false;
    const stopping = dispatcher.stop().then(() => {
      stopped = true;
    });
    await sleep(50);
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(receiver.arrivals.map((a) => a.eventId)).toEqual([eventId]);
    expect((await deliveries(key, eventId))[0]).toMatchObject({ status: 'succeeded' });
    expect(errors).toEqual([]);
  });

  it('one endpoint that hangs holds only its own slots: the others flow, and it never has more than its limit open', async () => {
    const { key } = await organization();
    const timeline: TimelineEntry[] = [];
    const hanging = await startTestReceiver('A', timeline);
    hanging.status = () => 'hang';
    const prompt = await startTestReceiver('B', timeline);
    const errors: unknown[] = [];
    const burst = 10;
    const timeoutMs = 4_000;
    const deps: Deps = t.deps;
    let dispatcher: { stop(): Promise<void> } | undefined;
    try {
      const a = await subscribe(key, hanging.url);
      const b = await subscribe(key, prompt.url);
      const events: string[] = [];
      for (let i = 0; i < burst; i++) events.push(await emit(key));
      dispatcher = startWebhookDispatcher(deps, options({ timeoutMs, retryScheduleSeconds: [3_600] }), (e) =>
        errors.push(e),
      );

      await waitFor('every delivery to B', () => prompt.arrivals.length >= burst);
      // Every one of B's deliveries arrived before the first of A's requests ended (by time-out).
      const firstAClosed = timeline.findIndex((e) => e.receiver === 'A' && e.kind === 'closed');
      const lastBArrived = timeline.findLastIndex((e) => e.receiver === 'B' && e.kind === 'arrived');
      expect(firstAClosed === -1 || lastBArrived < firstAClosed, JSON.stringify(timeline)).toBe(true);
      expect(hanging.openMax).toBe(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
      expect(new Set(prompt.arrivals.map((r) => r.eventId))).toEqual(new Set(events));

      // A's first requests time out and its next ones take their slots, never more at once.
      await waitFor(
        'a second round at A',
        () => hanging.arrivals.length >= 2 * WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
      );
      await sleep(300);
      expect(hanging.openMax).toBe(WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX);
      expect(hanging.arrivals.length).toBeLessThanOrEqual(burst);
      const firstEvent = events[0] as string;
      const rows = await deliveries(key, firstEvent);
      expect(rows.find((d) => d.subscription === b.id)).toMatchObject({ status: 'succeeded' });
      const toA = rows.find((d) => d.subscription === a.id);
      if (toA.status !== 'delivering') {
        expect(toA.attempt_log[0]).toMatchObject({ error_class: 'timeout' });
      }
    } finally {
      await hanging.close();
      await dispatcher?.stop();
      await prompt.close();
    }
    expect(errors).toEqual([]);
  });
  it('an answer with NUL bytes (gzip) is logged sanitised; the delivery follows its schedule and frees its slot', async () => {
    const { key } = await organization();
    await subscribe(key);
    const gzipped = gzipSync(Buffer.from('{"received":true}'));
    expect(gzipped.includes(0)).toBe(true);
    let calls = 0;
    receiver.status = () => (++calls === 1 ? 500 : 200);
    receiver.body = () => gzipped;
    const eventId = await emit(key);
    const opts = options({ retryScheduleSeconds: [0] });
    const errors: unknown[] = [];
    expect(await dispatchWebhooksOnce(t.deps, opts, (e) => errors.push(e))).toBe(1);
    const [failed] = await deliveries(key, eventId);
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500 });
    expect(failed.next_attempt_at).not.toBeNull();
    expect(failed.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 500, error_class: null }),
    ]);
    const excerpt: string = failed.attempt_log[0].response_body;
    expect(excerpt).not.toContain('\u0000');
    expect(excerpt).toContain('\uFFFD');

    // Not `delivering`: it holds no in-flight slot and is due again at once, by the schedule.
    expect(await dispatchWebhooksOnce(t.deps, opts, (e) => errors.push(e))).toBe(1);
    const [succeeded] = await deliveries(key, eventId);
    expect(succeeded).toMatchObject({ status: 'succeeded', attempts: 2, next_attempt_at: null });
    expect(succeeded.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);
    expect(succeeded.attempt_log[1].response_body).not.toContain('\u0000');
    expect(receiver.arrivals).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('long answers, invalid UTF-8 and lone surrogates are cut and stored; an answer that never ends is not a time-out', async () => {
    const { key } = await organization();
    await subscribe(key);
    receiver.body = () => Buffer.concat([Buffer.from([0xff, 0xc3]), Buffer.from('é'.repeat(200_000))]);
    const long = await emit(key);
    await drain(options());
    const [cut] = await deliveries(key, long);
    expect(cut).toMatchObject({ status: 'succeeded', last_status_code: 200 });
    const excerpt: string = cut.attempt_log[0].response_body;
    expect(excerpt.startsWith('\uFFFD\uFFFDéé')).toBe(true);
    expect(excerpt.length).toBe(WEBHOOK_RESPONSE_BODY_CHARS_MAX);

    // A 200 followed by a body that streams on: the answer is read up to the excerpt, not until the time-out.
    receiver.status = () => 'stream';
    const endless = await emit(key);
    await drain(options({ timeoutMs: 3_000, retryScheduleSeconds: [3_600] }));
    const [streamed] = await deliveries(key, endless);
    expect(streamed).toMatchObject({ status: 'succeeded', last_status_code: 200, last_error: null });
    expect(streamed.attempt_log[0].duration_ms).toBeLessThan(3_000);
    expect(streamed.attempt_log[0].response_body).toBe('x'.repeat(WEBHOOK_RESPONSE_BODY_CHARS_MAX));

    // A sender that hands back text PostgreSQL cannot hold as it is.
    const odd: WebhookSender = async () => ({
      kind: 'response',
      statusCode: 503,
      body: `a\u0000b\uD800c\uDC00d${'😀'.repeat(WEBHOOK_RESPONSE_BODY_CHARS_MAX)}`,
      retryAfterSeconds: undefined,
    });
    const strange = await emit(key);
    await drain(options({ retryScheduleSeconds: [3_600] }, odd));
    const [stored] = await deliveries(key, strange);
    expect(stored).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });
    const body: string = stored.attempt_log[0].response_body;
    expect(body.startsWith('a\uFFFDb\uFFFDc\uFFFDd😀')).toBe(true);
    // Cut to the bound without splitting the last emoji's surrogate pair.
    expect(body.length).toBeLessThanOrEqual(WEBHOOK_RESPONSE_BODY_CHARS_MAX);
    expect(body.length).toBeGreaterThan(WEBHOOK_RESPONSE_BODY_CHARS_MAX - 2);
    expect(body.endsWith('😀')).toBe(true);
  });

  it('a sender that throws counts as a failed attempt (internal) and the schedule runs out; the endpoint is not blamed', async () => {
    const { key, organizationId } = await organization();
    const subscription = await subscribe(key);
    const eventId = await emit(key);
    const broken: WebhookSender = async () => {
      throw new Error('sender bug: secret detail');
    };
    const errors: unknown[] = [];
    await drain(options({ retryScheduleSeconds: [0, 0] }, broken), 10, t.deps, (e) => errors.push(e));
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 3, next_attempt_at: null });
    expect(delivery.last_error).toMatch(/^internal: /);
    expect(delivery.attempt_log.map((a: { error_class: string }) => a.error_class)).toEqual([
      'internal',
      'internal',
      'internal',
    ]);
    for (const a of delivery.attempt_log) expect(a.response_body).not.toContain('secret detail');
    expect(errors).toHaveLength(3);
    expect((await findSubscription(t.deps.store, organizationId, subscription.id))?.failingSince).toBeNull();
  });

  it('an event that cannot be rendered counts as a failed attempt (internal) and is never sent', async () => {
    const { key } = await organization();
    await subscribe(key);
    const eventId = await emit(key);
    // Corrupt the stored event: a creation time no envelope can spell.
    await t.db.store.query("UPDATE events SET created_at = 'infinity' WHERE id = $1", [eventId]);
    const errors: unknown[] = [];
    await drain(options({ retryScheduleSeconds: [0] }), 10, t.deps, (e) => errors.push(e));
    expect(receiver.arrivals).toHaveLength(0);
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 2, next_attempt_at: null });
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: null, error_class: 'internal' }),
      expect.objectContaining({ attempt: 2, status_code: null, error_class: 'internal' }),
    ]);
    expect(errors).toHaveLength(2);
  });

  it('an outcome transaction that fails once is retried and the answer recorded as it was', async () => {
    const { key } = await organization();
    await subscribe(key);
    const eventId = await emit(key);
    const store = t.deps.store;
    let transactions = 0;
    // The claim commits; the first try at recording the outcome meets a dropped connection.
    const flaky = withTransaction(store, async (fn) => {
      if (++transactions === 2) throw new Error('Connection terminated unexpectedly');
      return store.transaction(fn);
    });
    const errors: unknown[] = [];
    expect(await dispatchWebhooksOnce({ ...t.deps, store: flaky }, options(), (e) => errors.push(e))).toBe(1);
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 200 });
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, error_class: null }),
    ]);
    expect(errors).toHaveLength(1);
  });

  it('an outcome that cannot be recorded at all is logged as a failed attempt (outcome_unrecordable) and the schedule applies', async () => {
    const { key, organizationId } = await organization();
    const subscription = await subscribe(key);
    receiver.status = () => 500;
    const eventId = await emit(key);
    const store = t.deps.store;
    // Every write to the subscription fails, so the full outcome of a failure (which marks the endpoint as
    // failing) can never commit.
    const broken = withTransaction(store, (fn) =>
      store.transaction((tx) =>
        fn({
          exec: (sql) => tx.exec(sql),
          query: (sql, params) =>
            sql.trimStart().startsWith('UPDATE webhook_subscriptions')
              ? Promise.reject(new Error('could not extend file'))
              : tx.query(sql, params),
        }),
      ),
    );
    const errors: unknown[] = [];
    await drain(options({ retryScheduleSeconds: [0] }), 10, { ...t.deps, store: broken }, (e) =>
      errors.push(e),
    );
    expect(receiver.arrivals).toHaveLength(2);
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 2, next_attempt_at: null });
    expect(delivery.last_error).toMatch(/^outcome_unrecordable: /);
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: null, error_class: 'outcome_unrecordable' }),
      expect.objectContaining({ attempt: 2, status_code: null, error_class: 'outcome_unrecordable' }),
    ]);
    expect(delivery.attempt_log[0].response_body).toContain('500');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    expect((await findSubscription(store, organizationId, subscription.id))?.failingSince).toBeNull();
  });

  it('more active secrets than sign one delivery: signed with the newest, and delivered', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    const start = Date.now();
    const rotated: string[] = [];
    for (let i = 1; i <= WEBHOOK_SIGNING_SECRETS_MAX + 2; i++) {
      const secret = formatWebhookSecret(randomBytes(32));
      await rotateSecret(
        t.deps.store,
        subscription.id,
        sealWebhookSecret(t.deps, subscription.id, secret),
        new Date(start + i),
        new Date(start + 86_400_000),
      );
      rotated.push(secret);
    }
    // Live in the table (written around the rotation bound): more than sign one delivery.
    const [live] = await t.deps.store.query<{ n: string }>(
      'SELECT count(*) AS n FROM webhook_secrets WHERE subscription_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
      [subscription.id, new Date()],
    );
    expect(Number(live?.n)).toBe(rotated.length + 1);
    const eventId = await emit(key);
    await drain(options());
    expect((await deliveries(key, eventId))[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
    const arrival = receiver.arrivals.at(-1);
    if (!arrival) throw new Error('nothing delivered');
    expect(arrival.signature.match(/v1=/g)).toHaveLength(WEBHOOK_SIGNING_SECRETS_MAX);
    const at = Math.floor(Date.now() / 1000);
    const newest = rotated.slice(-WEBHOOK_SIGNING_SECRETS_MAX);
    for (const secret of newest) {
      expect(verifySignatureHeader(arrival.body, arrival.signature, [secret], at).ok).toBe(true);
    }
    for (const secret of [subscription.secret, ...rotated.slice(0, 2)]) {
      expect(verifySignatureHeader(arrival.body, arrival.signature, [secret], at).ok).toBe(false);
    }
  });

  it('a subscription deleted or disabled between claim and send gets nothing, and no attempt is counted', async () => {
    const { key } = await organization();
    const removed = await subscribe(key, `${receiver.url}?s=removed`);
    const paused = await subscribe(key, `${receiver.url}?s=paused`);
    const eventId = await emit(key);
    const store = t.deps.store;
    let transactions = 0;
    const racing = withTransaction(store, async (fn) => {
      const result = await store.transaction(fn);
      // Right after the claim commits, the subscriptions change under the dispatcher.
      if (++transactions === 1) {
        await api(t, 'DELETE', `/v1/webhook-subscriptions/${removed.id}`, { key });
        await api(t, 'PATCH', `/v1/webhook-subscriptions/${paused.id}`, {
          key,
          body: { status: 'disabled' },
        });
      }
      return result;
    });
    expect(await dispatchWebhooksOnce({ ...t.deps, store: racing }, options())).toBe(2);
    expect(receiver.arrivals).toHaveLength(0);
    for (const d of await deliveries(key, eventId)) {
      expect(d).toMatchObject({ status: 'pending', attempts: 0, attempt_log: [] });
    }
    await api(t, 'PATCH', `/v1/webhook-subscriptions/${paused.id}`, { key, body: { status: 'enabled' } });
    await drain(options());
    expect(receiver.arrivals.map((a) => a.path)).toEqual(['/hooks?s=paused']);
    const rows = await deliveries(key, eventId);
    expect(rows.find((d) => d.subscription === paused.id)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    expect(rows.find((d) => d.subscription === removed.id)).toMatchObject({ status: 'pending', attempts: 0 });
  });

  it('attempts whose outcome was never recorded spend the schedule: the delivery is exhausted, not sent past it', async () => {
    const { key } = await organization();
    const subscription = await subscribe(key);
    const eventId = await emit(key);
    // Three dispatchers in turn claim the delivery and die before recording anything: each lease runs out.
    for (let i = 0; i < 3; i++) {
      const claimed = await t.deps.store.transaction((tx) =>
        claimDueDeliveries(
          tx,
          new Date(),
          new Date(Date.now() - 1_000),
          50,
          WEBHOOK_SUBSCRIPTION_IN_FLIGHT_MAX,
        ),
      );
      expect(claimed.filter((d) => d.subscriptionId === subscription.id)).toHaveLength(1);
    }
    await drain(options({ retryScheduleSeconds: [0] }));
    expect(receiver.arrivals).toHaveLength(0);
    const [delivery] = await deliveries(key, eventId);
    expect(delivery).toMatchObject({ status: 'exhausted', attempts: 4, next_attempt_at: null });
    expect(delivery.attempt_log).toEqual([
      expect.objectContaining({ attempt: 4, status_code: null, error_class: 'schedule_spent' }),
    ]);
  });
  it('the sender answers a header value or URL Node refuses with an error result, never an exception', async () => {
    const send = httpWebhookSender({ timeoutMs: PROMPT_TIMEOUT_MS, blockReservedAddresses: false });
    await expect(send(receiver.url, '{}', { 'x-broken': 'a\nb' })).resolves.toMatchObject({
      kind: 'error',
      errorClass: 'other',
    });
    await expect(send('not a url', '{}', {})).resolves.toMatchObject({ kind: 'error', errorClass: 'other' });
    expect(receiver.arrivals).toHaveLength(0);
  });
});
