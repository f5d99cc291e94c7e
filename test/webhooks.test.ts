import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import { verifySignatureHeader } from '../src/domain/signing.ts';
import { type DispatcherOptions, dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import {
  api,
  BACKENDS,
  complianceKey,
  createCustomer,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

function options(overrides: Partial<DispatcherOptions['settings']> = {}): DispatcherOptions {
  const settings = { ...defaultWebhookSettings('sandbox'), timeoutMs: 10_000, ...overrides };
  return {
    settings,
    sender: httpWebhookSender({ timeoutMs: settings.timeoutMs, blockReservedAddresses: false }),
    random: () => 0.5,
  };
}

async function drain(t: TestApp, opts = options(), passesMax = 10): Promise<void> {
  for (let i = 0; i < passesMax; i++) if ((await dispatchWebhooksOnce(t.deps, opts)) === 0) return;
}

describe.each(BACKENDS)('webhooks on %s', (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // The receiver listens on 127.0.0.1: local development's opt-in (MKOBA_WEBHOOK_ALLOW_PRIVATE=1).
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.respond = () => ({ status: 200 });
  });

  async function subscribe(body: Record<string, unknown>, key = t.key) {
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', {
      key,
      body: { url: receiver.url, ...body },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.data as { id: string; secret: string };
  }

  it('creates a subscription at the spec path and under /v1, showing the secret only once', async () => {
    const spec = await api(t, 'POST', '/webhook-subscriptions', {
      body: { url: receiver.url, events: ['transfer.settled'], description: 'ops' },
    });
    expect(spec.statusCode).toBe(201);
    expect(spec.data).toMatchObject({
      object: 'webhook_subscription',
      url: receiver.url,
      events: ['transfer.settled'],
      description: 'ops',
      payload_format: 'snake_case',
      status: 'enabled',
    });
    expect(spec.data.id).toMatch(/^whsub_/);
    expect(spec.data.secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    const fetched = await api(t, 'GET', `/v1/webhook-subscriptions/${spec.data.id}`);
    expect(fetched.data.secret).toBeUndefined();
    const listed = await api(t, 'GET', '/v1/webhook-subscriptions');
    expect(
      listed.data.data.some((s: { id: string; secret?: string }) => s.id === spec.data.id && !s.secret),
    ).toBe(true);
    expect((await api(t, 'DELETE', `/v1/webhook-subscriptions/${spec.data.id}`)).data.deleted).toBe(true);
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${spec.data.id}`)).statusCode).toBe(404);
  });

  it('refuses unknown event types and unsafe URLs, naming the field', async () => {
    const unknown = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: receiver.url, events: ['transfer.settled', 'transfer.exploded'] },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.data).toMatchObject({ code: 'validation_error', param: 'events' });
    expect(unknown.data.detail).toContain('transfer.exploded');
    for (const url of [
      'http://example.com/hook',
      'ftp://127.0.0.1/x',
      'not a url',
      'https://user:pw@example.com/',
    ]) {
      const response = await api(t, 'POST', '/v1/webhook-subscriptions', { body: { url, events: ['*'] } });
      expect(response.statusCode, url).toBe(400);
      expect(response.data.param, url).toBe('url');
    }
  });

  it('delivers every transfer event, signed, with the event id header, and logs the attempt', async () => {
    const subscription = await subscribe({ events: ['*'] });
    const wallet = await fundedWallet(t, '100.00');
    await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
    });
    await drain(t);
    expect(receiver.received.length).toBeGreaterThanOrEqual(3);
    for (const request of receiver.received) {
      expect(request.headers['content-type']).toBe('application/json');
      const event = JSON.parse(request.body);
      expect(request.headers['service-event-id']).toBe(event.id);
      const check = verifySignatureHeader(
        request.body,
        request.headers['service-signature'] as string,
        [subscription.secret],
        Math.floor(Date.now() / 1000),
      );
      expect(check.ok).toBe(true);
      expect(event).toMatchObject({ object: 'event', environment: 'sandbox', product: 'mobile_money' });
      expect(event.created_at).toBeTypeOf('string');
    }
    const types = receiver.received.map((r) => JSON.parse(r.body).type);
    expect(types).toEqual(expect.arrayContaining(['transfer.created', 'transfer.settled']));
    const created = receiver.received.find((r) => JSON.parse(r.body).type === 'transfer.created');
    const eventId = JSON.parse(created?.body ?? '{}').id;
    const deliveries = await api(t, 'GET', `/v1/events/${eventId}/deliveries`);
    expect(deliveries.data.data[0]).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      subscription: subscription.id,
    });
    expect(deliveries.data.data[0].attempt_log[0]).toMatchObject({
      attempt: 1,
      status_code: 200,
      error_class: null,
    });
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${subscription.id}`);
  });

  it('camel_case subscriptions get the spec spelling 2, leaving metadata keys alone', async () => {
    const subscription = await subscribe({ events: ['transfer.created'], payload_format: 'camel_case' });
    try {
      // Funding the wallet makes a transfer.created of its own, delivered in the same pass in either order.
      const wallet = await fundedWallet(t, '100.00');
      const transfer = await api(t, 'POST', '/v1/transfers', {
        body: {
          source: wallet,
          destination: mobileMoney('+254700000000'),
          amount: '10.00',
          currency: 'KES',
          metadata: { customer_ref: 'A-1' },
        },
      });
      await drain(t);
      const event = receiver.received
        .map((r) => JSON.parse(r.body))
        .find((e) => e.data?.transferId === transfer.data.id);
      expect(event).toHaveProperty('createdAt');
      expect(event).not.toHaveProperty('created_at');
      expect(event.data).toHaveProperty('transferId');
      expect(event.data).toHaveProperty('ledgerState');
      expect(event.data.metadata).toEqual({ customer_ref: 'A-1' });
      expect(event.environment).toBe('sandbox');
    } finally {
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${subscription.id}`);
    }
  });

  it('compliance events reach subscriptions in both spellings', async () => {
    const types = ['customer.verification.updated', 'wallet.frozen'];
    const snake = await subscribe({ events: types });
    const camel = await subscribe({ events: types, payload_format: 'camel_case' });
    try {
      const customer = await createCustomer(t);
      const verified = await api(t, 'POST', `/v1/customers/${customer}/verifications`, {
        body: {
          type: 'individual',
          legal_name: 'Neema Mwangi',
          date_of_birth: '1991-03-09',
          national_id: { type: 'national_id', number: '27001234' },
          phone: '+254711555666',
          address: { line1: '5 Kenyatta Road', city: 'Nakuru', country: 'KE' },
        },
      });
      expect(verified.statusCode, verified.body).toBe(201);
      const wallet = await fundedWallet(t, '0');
      const operator = await complianceKey(t);
      expect(
        (
          await api(t, 'POST', `/v1/wallets/${wallet}/freeze`, {
            key: operator,
            body: { reason: 'court_order' },
          })
        ).statusCode,
      ).toBe(200);
      await drain(t);
      const received = receiver.received.map((r) => JSON.parse(r.body));
      const ofType = (type: string, camelCase: boolean) =>
        received.find((e) => e.type === type && (camelCase ? 'createdAt' in e : 'created_at' in e));
      expect(ofType('customer.verification.updated', false)?.data).toMatchObject({
        customer_id: customer,
        kyc_status: 'verified',
        tier: 1,
      });
      expect(ofType('customer.verification.updated', true)?.data).toMatchObject({
        customerId: customer,
        kycStatus: 'verified',
        verificationId: verified.data.id,
      });
      expect(ofType('wallet.frozen', false)?.data).toMatchObject({
        wallet_id: wallet,
        status_reason: 'court_order',
      });
      expect(ofType('wallet.frozen', true)?.data).toMatchObject({
        walletId: wallet,
        statusReason: 'court_order',
      });
    } finally {
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${snake.id}`);
      await api(t, 'DELETE', `/v1/webhook-subscriptions/${camel.id}`);
    }
  });

  it('retries failures on the schedule, honouring Retry-After, and 410 disables the subscription', async () => {
    const wallet = await fundedWallet(t, '100.00');
    const subscription = await subscribe({ events: ['transfer.created'] });
    const opts = options({ retryScheduleSeconds: [0, 0, 0] });
    let calls = 0;
    receiver.respond = () => (++calls < 3 ? { status: 503 } : { status: 200 });
    await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '1.00', currency: 'KES' },
    });
    for (let i = 0; i < 5; i++) await drain(t, opts);
    expect(calls).toBe(3);
    const ids = new Set(receiver.received.map((r) => r.headers['service-event-id']));
    expect(ids.size).toBe(1);
    const eventId = [...ids][0] as string;
    const deliveries = await api(t, 'GET', `/v1/events/${eventId}/deliveries`);
    expect(deliveries.data.data[0]).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect(deliveries.data.data[0].attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([
      503, 503, 200,
    ]);

    // A Retry-After longer than the schedule's delay wins: the next attempt waits for it.
    receiver.respond = () => ({ status: 429, headers: { 'retry-after': '120' } });
    const limited = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
    await drain(t, opts);
    const waiting = (await api(t, 'GET', `/v1/events/${limited.data.id}/deliveries`)).data.data[0];
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 429 });
    expect(Date.parse(waiting.next_attempt_at) - Date.now()).toBeGreaterThan(100_000);

    receiver.respond = () => ({ status: 410 });
    await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.created' } });
    await drain(t, opts);
    const disabled = await api(t, 'GET', `/v1/webhook-subscriptions/${subscription.id}`);
    expect(disabled.data).toMatchObject({ status: 'disabled', disabled_reason: 'endpoint_gone' });
    const notice = await api(t, 'GET', '/v1/events?type=webhook_subscription.disabled');
    expect(notice.statusCode, notice.body).toBe(200);
    expect(notice.data.data[0].data).toMatchObject({
      subscription_id: subscription.id,
      reason: 'endpoint_gone',
    });
    const undelivered = await api(t, 'GET', '/v1/events?delivery_success=false');
    expect(undelivered.data.data.length).toBeGreaterThanOrEqual(1);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${subscription.id}`);
  });

  it('rotation signs with both secrets during the grace period; redeliver and recover re-send', async () => {
    const subscription = await subscribe({ events: ['transfer.settled'] });
    const rotated = await api(t, 'POST', `/v1/webhook-subscriptions/${subscription.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    expect(rotated.data.secret).not.toBe(subscription.secret);
    const emitted = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.settled' } });
    expect(emitted.statusCode).toBe(201);
    await drain(t);
    const request = receiver.received.at(-1);
    const header = request?.headers['service-signature'] as string;
    expect(header.match(/v1=/g)).toHaveLength(2);
    const now = Math.floor(Date.now() / 1000);
    expect(verifySignatureHeader(request?.body ?? '', header, [subscription.secret], now).ok).toBe(true);
    expect(verifySignatureHeader(request?.body ?? '', header, [rotated.data.secret], now).ok).toBe(true);

    const before = receiver.received.length;
    expect((await api(t, 'POST', `/v1/events/${emitted.data.id}/redeliver`)).statusCode).toBe(202);
    await drain(t);
    expect(receiver.received.length).toBe(before + 1);
    expect(receiver.received.at(-1)?.headers['service-event-id']).toBe(emitted.data.id);

    const recovered = await api(t, 'POST', `/v1/webhook-subscriptions/${subscription.id}/recover`, {
      body: { since: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(recovered.statusCode).toBe(202);
    expect(recovered.data.requeued).toBeGreaterThanOrEqual(1);
    await drain(t);
    expect(receiver.received.length).toBeGreaterThan(before + 1);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${subscription.id}`);
  });

  it("another organization's subscriptions and events stay hidden and undelivered", async () => {
    const other = await newOrganizationKey(t);
    const mine = await subscribe({ events: ['*'] });
    expect((await api(t, 'GET', `/v1/webhook-subscriptions/${mine.id}`, { key: other })).statusCode).toBe(
      404,
    );
    await api(t, 'POST', '/v1/sandbox/events', { key: other, body: { type: 'transfer.created' } });
    await drain(t);
    expect(receiver.received).toHaveLength(0);
    await api(t, 'DELETE', `/v1/webhook-subscriptions/${mine.id}`);
  });
});
