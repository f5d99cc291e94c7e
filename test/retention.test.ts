/**
 * Retention: events past MKOBA_RETENTION_DAYS go with their finished deliveries and attempt logs, in
 * bounded batches, oldest first; recent or unfinished ones stay; the API answers 404 for a pruned event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RETENTION_DAYS_DEFAULT_PRODUCTION,
  RETENTION_DAYS_DEFAULT_SANDBOX,
} from '../src/config/retention.ts';
import { loadConfig } from '../src/config.ts';
import { pruneEventsBatch } from '../src/store/repositories/retention.ts';
import { pruneExpiredHistory } from '../src/workers/retentionPruner.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 30;

describe('retention settings', () => {
  it('defaults to 30 days in production and 7 in the sandbox, and refuses nonsense', () => {
    expect(loadConfig({ MKOBA_ENV: 'sandbox' }).retention.days).toBe(RETENTION_DAYS_DEFAULT_SANDBOX);
    expect(RETENTION_DAYS_DEFAULT_SANDBOX).toBe(7);
    expect(loadConfig({ MKOBA_ENV: 'production', DATABASE_URL: 'postgres://x/y' }).retention.days).toBe(
      RETENTION_DAYS_DEFAULT_PRODUCTION,
    );
    expect(RETENTION_DAYS_DEFAULT_PRODUCTION).toBe(30);
    expect(loadConfig({ MKOBA_RETENTION_DAYS: '90' }).retention.days).toBe(90);
    for (const bad of ['0', '-1', '1.5', 'week', '99999']) {
      expect(() => loadConfig({ MKOBA_RETENTION_DAYS: bad })).toThrow(/MKOBA_RETENTION_DAYS/);
    }
  });
});

describe.each(BACKENDS)('retention pruning (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    // No dispatcher runs here: the receiver is never called, the tests set the deliveries' state.
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: 'http://127.0.0.1:9/mkoba', events: ['transfer.created'] },
    });
    expect(response.statusCode, response.body).toBe(201);
  });
  afterAll(() => t?.close());

  async function emit(type = 'transfer.created'): Promise<string> {
    const response = await api(t, 'POST', '/v1/sandbox/events', { body: { type } });
    expect(response.statusCode, response.body).toBe(201);
    return response.data.id;
  }

  /** Moves an event (and its deliveries) back in time and sets the deliveries' state, with attempts. */
  async function age(
    eventId: string,
    ageDays: number,
    status: string,
    { lastAttemptAgeDays = ageDays, attempts = true } = {},
  ) {
    const at = new Date(t.deps.now().getTime() - ageDays * DAY_MS);
    const lastAttempt = new Date(t.deps.now().getTime() - lastAttemptAgeDays * DAY_MS);
    await t.db.store.query('UPDATE events SET created_at = $2 WHERE id = $1', [eventId, at]);
    const deliveries = await t.db.store.query<{ id: string }>(
      `UPDATE webhook_deliveries SET created_at = $2, status = $3, last_attempt_at = $4, attempts = 2,
              succeeded_at = CASE WHEN $3 = 'succeeded' THEN $4::timestamptz END
        WHERE event_id = $1 RETURNING id`,
      [eventId, at, status, lastAttempt],
    );
    for (const d of attempts ? deliveries : []) {
      for (const attempt of [1, 2]) {
        await t.db.store.query(
          `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
           VALUES ($1, $2, $3, 12, 500)`,
          [d.id, attempt, lastAttempt],
        );
      }
    }
    return deliveries.length;
  }

  async function count(table: string): Promise<number> {
    const [row] = await t.db.store.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return row?.n ?? 0;
  }

  it('prunes old finished events with their deliveries and attempts, and keeps the rest', async () => {
    const oldSucceeded = await emit();
    const oldExhausted = await emit();
    const oldPending = await emit();
    const oldDelivering = await emit();
    const oldButRetriedLately = await emit();
    const recentSucceeded = await emit();
    // An old event no subscription wanted: no deliveries at all.
    const oldUndelivered = await emit('transfer.settled');
    expect(await age(oldSucceeded, 40, 'succeeded')).toBe(1);
    expect(await age(oldExhausted, 35, 'exhausted')).toBe(1);
    await age(oldPending, 40, 'pending');
    await age(oldDelivering, 40, 'delivering');
    await age(oldButRetriedLately, 40, 'succeeded', { lastAttemptAgeDays: 2 });
    await age(recentSucceeded, 3, 'succeeded');
    expect(await age(oldUndelivered, 50, 'succeeded')).toBe(0);
    const attemptsBefore = await count('webhook_attempts');

    const totals = await pruneExpiredHistory(t.deps, RETENTION_DAYS);
    expect(totals).toMatchObject({ events: 3, deliveries: 2, attempts: 4 });
    expect(await count('webhook_attempts')).toBe(attemptsBefore - 4);

    for (const gone of [oldSucceeded, oldExhausted, oldUndelivered]) {
      const event = await api(t, 'GET', `/v1/events/${gone}`);
      expect(event.statusCode, gone).toBe(404);
      expect(event.data.code).toBe('resource_missing');
      expect((await api(t, 'GET', `/v1/events/${gone}/deliveries`)).statusCode).toBe(404);
    }
    for (const kept of [oldPending, oldDelivering, oldButRetriedLately, recentSucceeded]) {
      expect((await api(t, 'GET', `/v1/events/${kept}`)).statusCode, kept).toBe(200);
      const log = await api(t, 'GET', `/v1/events/${kept}/deliveries`);
      expect(log.statusCode).toBe(200);
      expect(log.data.data).toHaveLength(1);
      expect(log.data.data[0].attempt_log).toHaveLength(2);
    }
    const listed = await api(t, 'GET', '/v1/events?limit=100');
    const listedIds = listed.data.data.map((e: { id: string }) => e.id);
    expect(listedIds).not.toContain(oldSucceeded);
    expect(listedIds).toContain(oldPending);

    // A second run finds nothing more: pruning converges.
    expect(await pruneExpiredHistory(t.deps, RETENTION_DAYS)).toMatchObject({
      events: 0,
      deliveries: 0,
      attempts: 0,
    });
    // Once the pending delivery finishes, the next run takes its event too.
    await age(oldPending, 40, 'exhausted', { attempts: false });
    expect((await pruneExpiredHistory(t.deps, RETENTION_DAYS)).events).toBe(1);
    expect((await api(t, 'GET', `/v1/events/${oldPending}`)).statusCode).toBe(404);
  });

  it('deletes in bounded batches, oldest first, and walks past events it keeps', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await emit());
    // Oldest first: ids[0] is the oldest. ids[1] stays (its delivery is pending) and sits among them.
    for (const [i, id] of ids.entries()) await age(id, 60 - i, i === 1 ? 'pending' : 'succeeded');
    const cutoff = new Date(t.deps.now().getTime() - RETENTION_DAYS * DAY_MS);

    const first = await t.db.store.transaction((tx) => pruneEventsBatch(tx, cutoff, undefined, 3));
    expect(first).toMatchObject({ examined: 3, events: 2, deliveries: 2, attempts: 4 });
    expect((await api(t, 'GET', `/v1/events/${ids[0]}`)).statusCode).toBe(404);
    expect((await api(t, 'GET', `/v1/events/${ids[2]}`)).statusCode).toBe(404);
    expect((await api(t, 'GET', `/v1/events/${ids[3]}`)).statusCode).toBe(200);

    const [old] = await t.db.store.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM events WHERE created_at < $1',
      [cutoff],
    );
    const rest = await pruneExpiredHistory(t.deps, RETENTION_DAYS, 2);
    expect(rest.events).toBe(4);
    // Every old event is examined once, two per batch, until a batch comes back short.
    expect(rest.batches).toBe(Math.floor((old?.n ?? 0) / 2) + 1);
    expect((await api(t, 'GET', `/v1/events/${ids[1]}`)).statusCode).toBe(200);
    for (const id of ids.slice(2)) expect((await api(t, 'GET', `/v1/events/${id}`)).statusCode).toBe(404);
  });

  it('with an event stream, keeps what the stream has not published yet', async () => {
    const published = await emit();
    const unpublished = await emit();
    await age(published, 40, 'succeeded');
    await age(unpublished, 40, 'succeeded');
    t.deps.eventStream = 'RETENTION_TEST';
    try {
      // No cursor yet: nothing of the organization's was acknowledged, so nothing of it goes.
      await pruneExpiredHistory(t.deps, RETENTION_DAYS);
      for (const id of [published, unpublished])
        expect((await api(t, 'GET', `/v1/events/${id}`)).statusCode).toBe(200);
      // JetStream acknowledged through the first: it goes, the second stays.
      await t.db.store.query(
        `INSERT INTO event_stream_cursors (stream, organization_id, transaction_id, event_id)
         SELECT 'RETENTION_TEST', organization_id, transaction_id, id FROM events WHERE id = $1`,
        [published],
      );
      await pruneExpiredHistory(t.deps, RETENTION_DAYS);
      expect((await api(t, 'GET', `/v1/events/${published}`)).statusCode).toBe(404);
      expect((await api(t, 'GET', `/v1/events/${unpublished}`)).statusCode).toBe(200);
    } finally {
      t.deps.eventStream = undefined;
    }
  });
});
