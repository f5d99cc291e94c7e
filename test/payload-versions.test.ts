/**
 * Pinned payload versions: one event delivered to two subscriptions pinned to different versions arrives
 * in each one's shape; a subscription moves forward only; `GET /v1/events` renders any version and either
 * spelling. And the renderers themselves: each breaking change undone for the versions before it.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultWebhookSettings } from '../src/config/webhooks.ts';
import type { EventType } from '../src/domain/events.ts';
import {
  PAYLOAD_VERSION_LATEST,
  PAYLOAD_VERSION_OF_UNPINNED_SUBSCRIPTIONS,
  productOfEvent,
  renderPayloadVersion,
} from '../src/domain/payloadVersions.ts';
import { camelCaseSchema, eventEnvelopeSchema } from '../src/http/eventEnvelopeSchemas.ts';
import { dispatchWebhooksOnce } from '../src/modules/webhooks/workers/dispatcher.ts';
import type { WebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { httpWebhookSender } from '../src/modules/webhooks/workers/httpSender.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet, mobileMoney } from './support/ledger.ts';
import { type Receiver, startReceiver } from './support/receiver.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/** The event against its type's schema in the spelling it is in (the webhooks of openapi.json). */
function expectMatchesSchema(event: Record<string, unknown>, spelling: 'snake_case' | 'camel_case') {
  const snake = eventEnvelopeSchema(event.type as EventType);
  const validate = ajv.compile((spelling === 'camel_case' ? camelCaseSchema(snake) : snake) as object);
  expect(validate(event), `${event.type} (${spelling}): ${ajv.errorsText(validate.errors)}`).toBe(true);
}

describe('payload renderers', () => {
  it('undo each breaking change for the versions before it', () => {
    const alert = {
      type: 'aml.alert.opened',
      product: 'stablecoins',
      data: { alert_id: 'aml_1', transfer_id: null, conversion_quote_id: 'cq_1' },
    };
    expect(renderPayloadVersion(alert, '2026-12-06')).toEqual(alert);
    expect(renderPayloadVersion(alert, '2026-11-26')).toEqual({ ...alert, product: 'mkoba' });
    expect(renderPayloadVersion(alert, '2026-11-22')).toEqual({
      type: 'aml.alert.opened',
      product: 'mkoba',
      data: { alert_id: 'aml_1', transfer_id: null },
    });
    const refused = {
      type: 'transfer.failed',
      product: 'mobile_money',
      data: { failure_code: 'wallet_not_active' },
    };
    expect(renderPayloadVersion(refused, '2026-11-28').data.failure_code).toBe('wallet_not_active');
    expect(renderPayloadVersion(refused, '2026-11-26').data.failure_code).toBe('compliance_rejected');
    const railFailure = { ...refused, data: { failure_code: 'insufficient_funds' } };
    expect(renderPayloadVersion(railFailure, '2026-11-22').data.failure_code).toBe('insufficient_funds');
  });

  it('name the product family of the resource', () => {
    expect(productOfEvent('transfer.settled', { rail: 'mobile_money', currency: 'KES' })).toBe(
      'mobile_money',
    );
    expect(productOfEvent('transfer.settled', { rail: 'internal', currency: 'USDC' })).toBe('stablecoins');
    expect(productOfEvent('transfer.failed', { rail: 'digital_asset', currency: 'USDT' })).toBe(
      'stablecoins',
    );
    expect(productOfEvent('transfer.settled', { rail: 'bank', currency: 'KES' })).toBe('digital_banking');
    expect(productOfEvent('savings.account.opened', {})).toBe('digital_banking');
    expect(productOfEvent('loan.disbursed', {})).toBe('digital_banking');
    expect(productOfEvent('deposit.credited', {})).toBe('stablecoins');
    expect(productOfEvent('wallet.frozen', { currency: 'USDC' })).toBe('stablecoins');
    expect(productOfEvent('collection.succeeded', { rail: 'bank', method: 'bank_deposit' })).toBe(
      'digital_banking',
    );
    expect(productOfEvent('launch_gate.updated', { product: 'stablecoins' })).toBe('stablecoins');
  });
});

describe.each(BACKENDS)('pinned payload versions on %s', (backend) => {
  let t: TestApp;
  let older: Receiver;
  let newer: Receiver;
  const settings = defaultWebhookSettings('sandbox');
  const sender: WebhookSender = httpWebhookSender({
    timeoutMs: settings.timeoutMs,
    blockReservedAddresses: false,
  });
  const drain = async () => {
    const options = { settings, sender, random: () => 0.5 };
    for (let i = 0; i < 10; i++) if ((await dispatchWebhooksOnce(t.deps, options)) === 0) return;
  };
  const bodies = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as Record<string, any>);

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    older = await startReceiver('/older');
    newer = await startReceiver('/newer');
  });
  afterAll(async () => {
    await older.close();
    await newer.close();
    await t.close();
  });

  async function subscribe(url: string, body: Record<string, unknown>) {
    const response = await api(t, 'POST', '/v1/webhook-subscriptions', { body: { url, ...body } });
    expect(response.statusCode, response.body).toBe(201);
    return response.data as { id: string; api_version: string };
  }

  it('delivers one event in each subscription’s pinned version, and moves a subscription forward only', async () => {
    const pinned = await subscribe(older.url, { events: ['transfer.created'], api_version: '2026-11-22' });
    const latest = await subscribe(newer.url, { events: ['transfer.created'] });
    expect(pinned.api_version).toBe('2026-11-22');
    expect(latest.api_version).toBe(PAYLOAD_VERSION_LATEST);

    const wallet = await fundedWallet(t, '100.00');
    const transfer = await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '10.00', currency: 'KES' },
    });
    expect(transfer.statusCode, transfer.body).toBe(201);
    await drain();
    const [old] = bodies(older);
    const [current] = bodies(newer);
    expect(old?.id).toBe(current?.id);
    expect(old).toMatchObject({ type: 'transfer.created', api_version: '2026-11-22', product: 'mkoba' });
    expect(current).toMatchObject({
      type: 'transfer.created',
      api_version: PAYLOAD_VERSION_LATEST,
      product: 'mobile_money',
    });
    expect(old?.data).toEqual(current?.data);

    const back = await api(t, 'PATCH', `/v1/webhook-subscriptions/${latest.id}`, {
      body: { api_version: '2026-11-26' },
    });
    expect(back.statusCode).toBe(409);
    expect(back.data).toMatchObject({ code: 'api_version_downgrade', param: 'api_version' });
    const unknown = await api(t, 'PATCH', `/v1/webhook-subscriptions/${pinned.id}`, {
      body: { api_version: '2027-01-01' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.data).toMatchObject({ code: 'unknown_api_version', param: 'api_version' });
    const forward = await api(t, 'PATCH', `/v1/webhook-subscriptions/${pinned.id}`, {
      body: { api_version: PAYLOAD_VERSION_LATEST },
    });
    expect(forward.statusCode, forward.body).toBe(200);
    expect(forward.data.api_version).toBe(PAYLOAD_VERSION_LATEST);

    await api(t, 'POST', '/v1/transfers', {
      body: { source: wallet, destination: mobileMoney('+254700000000'), amount: '1.00', currency: 'KES' },
    });
    await drain();
    expect(bodies(older).at(-1)).toMatchObject({
      api_version: PAYLOAD_VERSION_LATEST,
      product: 'mobile_money',
    });
  });

  it('renders an AML alert without conversion_quote_id for a subscription pinned before 2026-11-26', async () => {
    older.received.length = 0;
    newer.received.length = 0;
    await subscribe(older.url, { events: ['aml.alert.opened'], api_version: '2026-11-22' });
    await subscribe(newer.url, { events: ['aml.alert.opened'], api_version: '2026-11-26' });
    const emitted = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'aml.alert.opened' } });
    expect(emitted.statusCode, emitted.body).toBe(201);
    await drain();
    const old = bodies(older).find((b) => b.type === 'aml.alert.opened');
    const current = bodies(newer).find((b) => b.type === 'aml.alert.opened');
    expect(old?.data).not.toHaveProperty('conversion_quote_id');
    expect(current?.data).toHaveProperty('conversion_quote_id', null);
    expect(old?.product).toBe('mkoba');
  });

  it('GET /v1/events renders the version and spelling asked for', async () => {
    const snake = await api(t, 'GET', '/v1/events?type=transfer.created&limit=1');
    expect(snake.data.data[0]).toMatchObject({
      api_version: PAYLOAD_VERSION_LATEST,
      product: 'mobile_money',
    });
    const camel = await api(
      t,
      'GET',
      `/v1/events?type=transfer.created&limit=1&payload_format=camel_case&api_version=${PAYLOAD_VERSION_OF_UNPINNED_SUBSCRIPTIONS}`,
    );
    expect(camel.statusCode, camel.body).toBe(200);
    const event = camel.data.data[0];
    expect(event).toMatchObject({ apiVersion: PAYLOAD_VERSION_OF_UNPINNED_SUBSCRIPTIONS, product: 'mkoba' });
    expect(event.createdAt).toBe(snake.data.data[0].created_at);
    expect(event.data.transferId).toBe(snake.data.data[0].data.transfer_id);
    const one = await api(t, 'GET', `/v1/events/${event.id}?payload_format=camel_case`);
    expect(one.data.data.ledgerState).toBe(snake.data.data[0].data.ledger_state);
    // Every event this file caused, in both spellings and every version, is what its schema says.
    for (const version of ['2026-11-22', PAYLOAD_VERSION_LATEST]) {
      for (const spelling of ['snake_case', 'camel_case'] as const) {
        const page = await api(
          t,
          'GET',
          `/v1/events?limit=100&api_version=${version}&payload_format=${spelling}`,
        );
        expect(page.data.data.length).toBeGreaterThan(3);
        for (const rendered of page.data.data) expectMatchesSchema(rendered, spelling);
      }
    }
    const bad = await api(t, 'GET', '/v1/events?api_version=2020-01-01');
    expect(bad.statusCode).toBe(400);
    expect(bad.data.param).toBe('api_version');
  });
});
