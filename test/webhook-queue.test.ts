/**
 * The long-running dispatcher's queue: it holds several rounds of a subscription's deliveries and sends
 * them at the in-flight limit, never more at once; a delivery still queued when its subscription is
 * disabled is not sent, and one queued when its secret is rotated is signed with the new one; a stopping
 * dispatcher gives its queue back at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { verifySignatureHeader } from '../src/domain/signing.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { claimDueDeliveries } from '../src/modules/webhooks/repository/claims.ts';
import {
  type DispatcherOptions,
  startWebhookDispatcher,
  WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS,
} from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { WEBHOOK_HELD_STATE_MAX_AGE_MS } from '../src/modules/webhooks/workers/sendSlots.ts';
import { sleep, waitFor } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const TIMEOUT_MS = 10_000;

function options(subscriptionConcurrency: number): DispatcherOptions {
  return {
    settings: {
      ...defaultWebhookSettings('sandbox'),
      timeoutMs: TIMEOUT_MS,
      subscriptionConcurrency,
      retryScheduleSeconds: [3_600],
    },
    sender: httpWebhookSender({ timeoutMs: TIMEOUT_MS, blockReservedAddresses: false }),
    random: () => 0.5,
  };
}

describe.each(BACKENDS)('webhook dispatcher queue on %s', (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  let organizations = 0;
  let created: { id: string; key: string }[] = [];

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(async () => {
    for (const s of created) await api(t, 'DELETE', `/v1/webhook-subscriptions/${s.id}`, { key: s.key });
    created = [];
    await receiver.close();
  });

  /** A fresh organization subscribed to transfer.created at a fresh receiver, with `events` queued. */
  async function backlog(
    events: number,
  ): Promise<{ key: string; subscriptionId: string; eventIds: string[] }> {
    receiver = await startReceiver();
    const { key } = await issueApiKey(t.deps, { organizationName: `Queue ${backend} ${++organizations}` });
    const subscribed = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: receiver.url, events: ['transfer.created'] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    created.push({ id: subscribed.data.id, key });
    const eventIds: string[] = [];
    for (let i = 0; i < events; i++) {
      const emitted = await api(t, 'POST', '/v1/sandbox/events', { key, body: { type: 'transfer.created' } });
      expect(emitted.statusCode, emitted.body).toBe(201);
      eventIds.push(emitted.data.id);
    }
    return { key, subscriptionId: subscribed.data.id, eventIds };
  }

  /** Runs `during` while a dispatcher sends with this in-flight limit; it is stopped after, having met no error. */
  async function whileDispatching(
    subscriptionConcurrency: number,
    during: () => Promise<void>,
    settings: Partial<DispatcherOptions['settings']> = {},
  ): Promise<void> {
    const errors: unknown[] = [];
    const opts = options(subscriptionConcurrency);
    const merged = { ...opts, settings: { ...opts.settings, ...settings } };
    const dispatcher = startWebhookDispatcher(t.deps, merged, (e) => errors.push(e));
    try {
      await during();
    } finally {
      await dispatcher.stop();
    }
    expect(errors).toEqual([]);
  }

  /** The subscription's deliveries, in the order of `eventIds` (their events' order) when given. */
  const rows = async (subscriptionId: string, eventIds: readonly string[] = []) =>
    (
      await t.deps.store.query(
        `SELECT event_id, status, attempts, lease_expires_at FROM webhook_deliveries
          WHERE subscription_id = $1 ORDER BY next_attempt_at, id`,
        [subscriptionId],
      )
    )
      .map((row) => ({
        eventId: String(row.event_id),
        status: String(row.status),
        attempts: Number(row.attempts),
        lease: row.lease_expires_at === null ? null : new Date(row.lease_expires_at as string).getTime(),
      }))
      .sort((a, b) => eventIds.indexOf(a.eventId) - eventIds.indexOf(b.eventId));

  it('holds several rounds of a backlog, each a round longer leased, and never sends more than the limit at once', async () => {
    const sendsAtOnce = 2;
    const depth = sendsAtOnce * WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS;
    const { subscriptionId, eventIds } = await backlog(depth + 4);
    // The first round is answered only after a while, so the queue behind it can be looked at.
    const firstRoundMs = 1_500;
    receiver.respond = () => ({
      status: 200,
      delayMs: receiver.received.length <= sendsAtOnce ? firstRoundMs : 5,
    });
    await whileDispatching(sendsAtOnce, async () => {
      await waitFor('the first round', () => receiver.received.length === sendsAtOnce);
      const leased = (await rows(subscriptionId)).filter((r) => r.status === 'delivering');
      expect(leased).toHaveLength(depth);
      // Each round of sends ahead of a row adds one time-out to its lease.
      const rounds = [...new Set(leased.map((r) => r.lease as number))].sort((a, b) => a - b);
      expect(rounds).toHaveLength(WEBHOOK_SUBSCRIPTION_QUEUE_ROUNDS);
      for (let i = 1; i < rounds.length; i++) {
        expect((rounds[i] as number) - (rounds[i - 1] as number)).toBe(TIMEOUT_MS);
      }
      await sleep(200);
      expect(receiver.received).toHaveLength(sendsAtOnce);

      await waitFor('every outcome', async () =>
        (await rows(subscriptionId)).every((r) => r.status === 'succeeded'),
      );
      expect(receiver.openMax).toBe(sendsAtOnce);
      expect(await owned(subscriptionId)).toBe(0);
      const sent = receiver.received.map((r) => String(r.headers['service-event-id']));
      expect(sent).toHaveLength(eventIds.length);
      expect(new Set(sent)).toEqual(new Set(eventIds));
    });
  });

  it('a delivery queued when its subscription is disabled is not sent, and its claim is not counted', async () => {
    const { key, subscriptionId, eventIds } = await backlog(4);
    // Each answer takes longer than a held delivery's state stays fresh.
    receiver.respond = () => ({ status: 200, delayMs: 3 * WEBHOOK_HELD_STATE_MAX_AGE_MS });
    await whileDispatching(1, async () => {
      await waitFor('the first send', () => receiver.received.length === 1);
      const disabled = await api(t, 'PATCH', `/v1/webhook-subscriptions/${subscriptionId}`, {
        key,
        body: { status: 'disabled' },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      await waitFor('the queue given back', async () =>
        (await rows(subscriptionId)).every((r) => r.status !== 'delivering'),
      );
      await sleep(4 * WEBHOOK_HELD_STATE_MAX_AGE_MS);
      expect(receiver.received.map((r) => r.headers['service-event-id'])).toEqual([eventIds[0]]);
      const after = await rows(subscriptionId, eventIds);
      expect(after[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(after.slice(1)).toEqual(
        eventIds.slice(1).map((eventId) => ({ eventId, status: 'pending', attempts: 0, lease: null })),
      );
      expect(await owned(subscriptionId)).toBe(0);
    });
  });

  it('a delivery queued when its secret is rotated with no grace is signed with the new secret only', async () => {
    const { key, subscriptionId, eventIds } = await backlog(3);
    receiver.respond = () => ({ status: 200, delayMs: 3 * WEBHOOK_HELD_STATE_MAX_AGE_MS });
    let secret = '';
    await whileDispatching(1, async () => {
      await waitFor('the first send', () => receiver.received.length === 1);
      const rotated = await api(t, 'POST', `/v1/webhook-subscriptions/${subscriptionId}/rotate-secret`, {
        key,
        body: { grace_period_hours: 0 },
      });
      expect(rotated.statusCode, rotated.body).toBe(200);
      secret = rotated.data.secret;
      await waitFor('every event', () => receiver.received.length === eventIds.length);
    });
    const at = Math.floor(Date.now() / 1000);
    for (const later of receiver.received.slice(1)) {
      const signature = String(later.headers['service-signature']);
      expect(signature.match(/v1=/g)).toHaveLength(1);
      expect(verifySignatureHeader(later.body, signature, [secret], at).ok).toBe(true);
    }
  });

  /** The subscription's deliveries that still name a lease owner (none should once they left `delivering`). */
  const owned = async (subscriptionId: string) =>
    (
      await t.deps.store.query(
        'SELECT id FROM webhook_deliveries WHERE subscription_id = $1 AND lease_owner IS NOT NULL',
        [subscriptionId],
      )
    ).length;

  /** Lets the leases of a subscription's queued deliveries run out, as if they had waited longer than foreseen. */
  const expireQueuedLeases = (subscriptionId: string, sentEventId: string) =>
    t.deps.store.query(
      `UPDATE webhook_deliveries SET lease_expires_at = now() - interval '1 second'
        WHERE subscription_id = $1 AND status = 'delivering' AND event_id <> $2`,
      [subscriptionId, sentEventId],
    );

  const claimAs = (owner: string) =>
    t.deps.store.transaction((tx) => {
      const at = new Date();
      return claimDueDeliveries(tx, at, new Date(at.getTime() + 60_000), 50, 8, {
        owner,
        sendsAtOnce: 1,
        roundMs: TIMEOUT_MS,
      });
    });

  it('a queued delivery whose lease ran out and was taken over by another dispatcher is not sent', async () => {
    const { subscriptionId, eventIds } = await backlog(4);
    // The first send is answered late, so this dispatcher cannot reach its queue (and renew it) before the
    // other has claimed; then it has time to try.
    const firstAnswerMs = 1_500;
    receiver.respond = () => ({ status: 200, delayMs: firstAnswerMs });
    // No poll for the hour either: a poll between the leases running out and the other's claim could take
    // them back first.
    await whileDispatching(
      1,
      async () => {
        await waitFor('the first send', () => receiver.received.length === 1);
        // Every lease of the subscription ran out: another dispatcher may take all four.
        await expireQueuedLeases(subscriptionId, '');
        const taken = (await claimAs('another')).filter((d) => d.subscriptionId === subscriptionId);
        expect(taken.map((d) => d.eventId).sort()).toEqual([...eventIds].sort());
        await sleep(firstAnswerMs + 6 * WEBHOOK_HELD_STATE_MAX_AGE_MS);
        expect(receiver.received.map((r) => r.headers['service-event-id'])).toEqual([eventIds[0]]);
      },
      { pollIntervalMs: 3_600_000 },
    );
    // Each is the other dispatcher's now (its attempt 2); the first one's late answer was only logged.
    expect((await rows(subscriptionId, eventIds)).map((r) => [r.status, r.attempts])).toEqual(
      eventIds.map(() => ['delivering', 2]),
    );
  });

  it('a queued delivery whose lease ran out while it waited is renewed before its send, and sent once', async () => {
    const { subscriptionId, eventIds } = await backlog(4);
    receiver.respond = () => ({ status: 200, delayMs: 3 * WEBHOOK_HELD_STATE_MAX_AGE_MS });
    // No poll for the hour: only the renewal can keep the queued rows from another dispatcher.
    await whileDispatching(
      1,
      async () => {
        await waitFor('the first send', () => receiver.received.length === 1);
        await expireQueuedLeases(subscriptionId, eventIds[0] as string);
        await waitFor('the second send', () => receiver.received.length === 2);
        // The second send's read renewed its lease and those queued behind it: nobody else may take them.
        expect((await claimAs('another')).filter((d) => d.subscriptionId === subscriptionId)).toEqual([]);
        await waitFor('every event', () => receiver.received.length >= eventIds.length);
        await waitFor('every outcome', async () =>
          (await rows(subscriptionId)).every((r) => r.status === 'succeeded'),
        );
      },
      { pollIntervalMs: 3_600_000 },
    );
    const sent = receiver.received.map((r) => String(r.headers['service-event-id']));
    expect(sent.sort()).toEqual([...eventIds].sort());
  });

  it('a stopping dispatcher gives back its queue at once, and the send in flight when it gives up', async () => {
    const { subscriptionId, eventIds } = await backlog(5);
    receiver.respond = () => ({ status: 200, delayMs: 60_000 });
    const errors: unknown[] = [];
    const dispatcher = startWebhookDispatcher(t.deps, options(1), (e) => errors.push(e));
    await waitFor('the first send', () => receiver.received.length === 1);
    expect((await rows(subscriptionId)).filter((r) => r.status === 'delivering')).toHaveLength(5);
    const stopping = dispatcher.stop();
    // The four queued behind the hanging send are pending again before the hand-back gives up on it.
    await waitFor(
      'the queue given back',
      async () => (await rows(subscriptionId)).filter((r) => r.status === 'pending').length === 4,
    );
    await stopping;
    expect(await rows(subscriptionId, eventIds)).toEqual(
      eventIds.map((eventId) => ({ eventId, status: 'pending', attempts: 0, lease: null })),
    );
    expect(receiver.received).toHaveLength(1);
    expect(await owned(subscriptionId)).toBe(0);
    expect(errors).toEqual([]);
  });
});
