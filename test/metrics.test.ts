/**
 * /metrics after some activity: the operator's metrics are there, with values that follow what happened,
 * read through the real HTTP layer and store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServiceMetrics } from '../src/metrics.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';

/** The value of one sample line of the exposition, or undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(t: TestApp): Promise<string> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain/);
  return response.body;
}

describe.each(BACKENDS)('/metrics (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
  });
  afterAll(() => t?.close());

  it('has the process, transfer, webhook, idempotency and pool metrics', async () => {
    const before = await scrape(t);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'mkoba_http_requests_total',
      'mkoba_ledger_writer_batch_commands',
      'mkoba_ledger_writer_wait_seconds',
      'mkoba_webhook_deliveries_total',
      'mkoba_webhook_backlog_age_seconds',
      'mkoba_webhook_backlog_deliveries',
      'mkoba_webhook_queue_depth',
      'mkoba_transfers_open',
      'mkoba_idempotency_conflicts_total',
    ]) {
      expect(before, name).toContain(`# TYPE ${name} `);
    }
    expect(sample(before, 'mkoba_webhook_backlog_deliveries')).toBe(0);
    expect(sample(before, 'mkoba_webhook_backlog_age_seconds')).toBe(0);
    expect(sample(before, 'mkoba_idempotency_conflicts_total{code="idempotency_key_reused"}')).toBe(0);
    expect(sample(before, 'mkoba_webhook_deliveries_total{outcome="succeeded"}')).toBe(0);
    if (backend === 'postgres') {
      expect(sample(before, 'mkoba_db_pool_connections{state="max"}')).toBeGreaterThan(0);
      expect(sample(before, 'mkoba_db_pool_connections{state="total"}')).toBeGreaterThan(0);
      expect(sample(before, 'mkoba_db_pool_waiting_requests')).toBeGreaterThanOrEqual(0);
    } else {
      // The embedded database has no pool.
      expect(before).not.toContain('mkoba_db_pool_connections');
    }
  });

  it('counts open transfers by status and rail', async () => {
    const wallet = await fundedWallet(t, '1000.00');
    for (const phone of ['+254700000001', '+254700000002']) {
      const created = await api(t, 'POST', '/v1/transfers', {
        body: { source: wallet, destination: mobileMoney(phone), amount: '10.00', currency: 'KES' },
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.data.status).toBe('pending');
    }
    const text = await scrape(t);
    expect(sample(text, 'mkoba_transfers_open{status="pending",rail="mobile_money"}')).toBe(2);
    // The funding transfer settled at once: final transfers are not counted.
    expect(text).not.toContain('mkoba_transfers_open{status="settled"');
    // Both transfers went through the ledger writer, which reports each batch it cuts.
    expect(sample(text, 'mkoba_ledger_writer_batch_commands_sum')).toBeGreaterThanOrEqual(2);
  });

  it('counts idempotency conflicts from the problems sent', async () => {
    const headers = { 'idempotency-key': 'metrics-reused' };
    const owner = (await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'M' } })).data
      .id;
    expect(
      (await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES' }, headers })).statusCode,
    ).toBe(201);
    const reused = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'UGX' }, headers });
    expect(reused.data.code).toBe('idempotency_key_reused');
    const text = await scrape(t);
    expect(sample(text, 'mkoba_idempotency_conflicts_total{code="idempotency_key_reused"}')).toBe(1);
    expect(sample(text, 'mkoba_idempotency_conflicts_total{code="idempotency_key_in_flight"}')).toBe(0);
  });

  it('shows the webhook backlog, its age and the deepest queue, without subscription ids by default', async () => {
    const subscribed = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: 'http://127.0.0.1:9/metrics', events: ['transfer.created'] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    const subscription = subscribed.data.id as string;
    for (let i = 0; i < 3; i++) {
      expect(
        (await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } })).statusCode,
      ).toBe(201);
    }
    // No dispatcher runs here: make the oldest delivery due two minutes ago.
    await t.db.store.query(
      `UPDATE webhook_deliveries SET next_attempt_at = $2
        WHERE id = (SELECT min(id) FROM webhook_deliveries WHERE subscription_id = $1)`,
      [subscription, new Date(Date.now() - 120_000)],
    );
    const text = await scrape(t);
    // No organization's ids on the page by default: the deepest queue, unlabelled.
    expect(sample(text, 'mkoba_webhook_queue_depth')).toBe(3);
    expect(text).not.toContain(subscription);
    expect(text).not.toContain('subscription_id=');
    // Opted in (MKOBA_METRICS_RESOURCE_LABELS=1): the deepest queues by subscription, as before.
    const labelled = createServiceMetrics(t.db.store, undefined, { resourceLabels: true });
    const labelledText = await labelled.registry.metrics();
    expect(sample(labelledText, `mkoba_webhook_queue_depth{subscription_id="${subscription}"}`)).toBe(3);
    expect(sample(text, 'mkoba_webhook_backlog_deliveries')).toBe(3);
    const age = sample(text, 'mkoba_webhook_backlog_age_seconds') ?? 0;
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(600);

    // The ledger writer reports every batch it cuts (this file's transfers made some already).
    const batchesBefore = sample(text, 'mkoba_ledger_writer_batch_commands_sum') ?? 0;
    const waitBefore = sample(text, 'mkoba_ledger_writer_wait_seconds_sum') ?? 0;
    t.deps.metrics?.observeWebhookDelivery('succeeded');
    t.deps.metrics?.observeWriterBatch(3, 4);
    const after = await scrape(t);
    expect(sample(after, 'mkoba_webhook_deliveries_total{outcome="succeeded"}')).toBe(1);
    expect(sample(after, 'mkoba_ledger_writer_batch_commands_sum')).toBe(batchesBefore + 3);
    expect(sample(after, 'mkoba_ledger_writer_wait_seconds_sum')).toBeCloseTo(waitBefore + 0.004);
  });
});
