/**
 * What landed on 2026-12-06, attacked by an insider and by an outsider holding a leaked key, through the
 * real HTTP layer and store: a body of tens of thousands of bad fields answered in time (the problem's
 * field errors are collected in linear time, not quadratic); odd values on the new routes, never a 500; a
 * promotion from a sandbox on a newer release that pins a payload version or names event types this
 * deployment does not know (skipped with its reason, never copied as it is); and a promoted subscription a
 * key cannot repoint at an unreviewed URL while the organization's own subscriptions are off. Each holds now.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../../src/app/admin.ts';
import { REQUEST_BODY_BYTES_MAX } from '../../src/config.ts';
import { METADATA_KEY_LENGTH_MAX } from '../../src/domain/metadata.ts';
import { PAYLOAD_VERSION_LATEST } from '../../src/domain/payloadVersions.ts';
import { issueApiKey } from '../../src/modules/apiKeys/useCases/keys.ts';
import { api, BACKENDS, startTestApp, type TestApp } from '../support/harness.ts';
import { newOrganization } from '../support/organizations.ts';
import {
  type LinkedDeployments,
  promoteSubscriptions,
  promotionOf,
  startLinkedDeployments,
} from '../support/promotion.ts';

/**
 * Far above what a request that lists its bad fields in linear time takes even on a loaded machine, and far
 * below what the same request took when each field error was compared with every other (6 s and more).
 */
const MANY_FAULTS_ANSWER_MS_MAX = 2_500;

/** A JSON object of as many distinct short unknown keys as fit in a body, and their count. */
function bodyOfUnknownKeys(bytesMax: number): { text: string; keys: number } {
  const parts: string[] = [];
  let length = 2;
  for (let i = 0; ; i++) {
    const part = `"${i.toString(36)}":0`;
    if (length + part.length + 1 > bytesMax) break;
    parts.push(part);
    length += part.length + 1;
  }
  return { text: `{${parts.join(',')}}`, keys: parts.length };
}

describe.each(BACKENDS)('a write key sends a body of tens of thousands of faults (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  async function timedPatch(path: string, text: string) {
    const started = performance.now();
    const response = await api(t, 'PATCH', path, {
      body: text,
      headers: { 'content-type': 'application/json' },
    });
    return { response, ms: performance.now() - started };
  }

  it('PATCH /v1/customers/{id} with every unknown field a body can hold: a 400 naming each, in time', async () => {
    const created = await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Wanjiku' } });
    expect(created.statusCode, created.body).toBe(201);
    const { text, keys } = bodyOfUnknownKeys(REQUEST_BODY_BYTES_MAX - 64);
    expect(keys).toBeGreaterThan(30_000);
    const { response, ms } = await timedPatch(`/v1/customers/${created.data.id}`, text);
    expect(response.statusCode, response.body.slice(0, 500)).toBe(400);
    expect(response.data).toMatchObject({ code: 'validation_error', param: '0' });
    expect(response.data.errors).toHaveLength(keys);
    expect(response.data.errors[keys - 1]).toMatchObject({
      param: (keys - 1).toString(36),
      code: 'unknown_field',
    });
    expect(ms).toBeLessThan(MANY_FAULTS_ANSWER_MS_MAX);
    // Nothing changed.
    const after = await api(t, 'GET', `/v1/customers/${created.data.id}`);
    expect(after.data).toMatchObject({ name: 'Wanjiku', updated_at: created.data.updated_at });
  });

  it('PATCH /v1/wallets/{id} with metadata of thousands of over-long keys: a 400 naming each key once, in time', async () => {
    const customer = await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Otieno' } });
    const wallet = await api(t, 'POST', '/v1/wallets', {
      body: { owner: customer.data.id, currency: 'KES' },
    });
    expect(wallet.statusCode, wallet.body).toBe(201);
    const keyPad = 'k'.repeat(METADATA_KEY_LENGTH_MAX);
    const entries: string[] = [];
    let length = '{"metadata":{}}'.length;
    for (let i = 0; ; i++) {
      const entry = `"${keyPad}${i.toString(36)}":""`;
      if (length + entry.length + 1 > REQUEST_BODY_BYTES_MAX - 64) break;
      entries.push(entry);
      length += entry.length + 1;
    }
    const { response, ms } = await timedPatch(
      `/v1/wallets/${wallet.data.id}`,
      `{"metadata":{${entries.join(',')}}}`,
    );
    expect(response.statusCode, response.body.slice(0, 500)).toBe(400);
    expect(response.data.code).toBe('validation_error');
    const keyErrors = (response.data.errors as { param: string; code: string }[]).filter(
      (e) => e.code === 'invalid_key',
    );
    // Each over-long key named once (not also as "property name must be valid").
    expect(keyErrors).toHaveLength(entries.length);
    expect(new Set(keyErrors.map((e) => e.param)).size).toBe(entries.length);
    expect(ms).toBeLessThan(MANY_FAULTS_ANSWER_MS_MAX);
  });
});

/** Odd values for each field of the new writes: none may be a 500, and none may change anything. */
const ODD_VALUES: unknown[] = [
  null,
  '',
  ' ',
  'x'.repeat(100_000),
  [],
  ['Amina'],
  {},
  0,
  -1,
  true,
  '\u202eevil\u202c',
  '🙂'.repeat(300),
];

describe.each(BACKENDS)('odd input on the new routes is a 4xx, never a 500 (%s)', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('PATCH customers and wallets, GET events with render parameters, subscriptions with an api_version', async () => {
    const created = await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Akinyi' } });
    const customerId = created.data.id as string;
    const wallet = await api(t, 'POST', '/v1/wallets', { body: { owner: customerId, currency: 'KES' } });
    const walletId = wallet.data.id as string;
    const subscription = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: 'https://93.184.215.14/odd', events: ['*'] },
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    const statuses: [string, number][] = [];
    const record = (label: string, status: number) => {
      statuses.push([label, status]);
    };
    for (const value of ODD_VALUES) {
      const label = JSON.stringify(value).slice(0, 40);
      for (const field of ['name', 'email', 'phone', 'address', 'metadata', 'type', 'kyc_status']) {
        const r = await api(t, 'PATCH', `/v1/customers/${customerId}`, { body: { [field]: value } });
        record(`customer ${field}=${label}`, r.statusCode);
      }
      const addressLine = await api(t, 'PATCH', `/v1/customers/${customerId}`, {
        body: { address: { line1: value, city: 'Nairobi', country: 'KE' } },
      });
      record(`customer address.line1=${label}`, addressLine.statusCode);
      for (const body of [{ metadata: value }, { metadata: { note: value } }, value]) {
        const r = await api(t, 'PATCH', `/v1/wallets/${walletId}`, { body });
        record(`wallet ${JSON.stringify(body).slice(0, 40)}`, r.statusCode);
      }
      for (const body of [{ api_version: value }, { payload_format: value }]) {
        const r = await api(t, 'PATCH', `/v1/webhook-subscriptions/${subscription.data.id}`, { body });
        record(`subscription ${JSON.stringify(body).slice(0, 40)}`, r.statusCode);
      }
      const text = encodeURIComponent(
        typeof value === 'string' ? value.slice(0, 2_000) : JSON.stringify(value),
      );
      for (const query of [`api_version=${text}`, `payload_format=${text}`]) {
        const r = await api(t, 'GET', `/v1/events?${query}`);
        record(`events ${query.slice(0, 40)}`, r.statusCode);
      }
    }
    const serverErrors = statuses.filter(([, status]) => status >= 500);
    expect(serverErrors).toEqual([]);
    // A name of a space or with a right-to-left override is text like any other (the last one given stays);
    // 300 emoji are 300 characters, past the name's limit.
    const after = await api(t, 'GET', `/v1/customers/${customerId}`);
    expect(after.statusCode).toBe(200);
    expect(after.data.name).toBe('\u202eevil\u202c');
  });
});

/** A public address written as an IP literal: accepted by production's rules without a DNS look-up. */
const PUBLIC_URL = 'https://93.184.215.14/mkoba/first-hour';
const NEWER_VERSION_URL = 'https://93.184.215.14/mkoba/newer-version';
const NEWER_EVENT_URL = 'https://93.184.215.14/mkoba/newer-event';
const REVIEWED_URL = 'https://93.184.215.14/mkoba/reviewed';
/** Another public address: where a leaked key would send the organization's events. */
const ATTACKER_URL = 'https://93.184.215.15/collect';
/** A payload version and an event type of a release newer than this one. */
const NEWER_PAYLOAD_VERSION = '2099-01-01';
const NEWER_EVENT_TYPE = 'transfer.teleported';

describe.each(BACKENDS)('promoted subscriptions: a newer sandbox release, a leaked key (%s)', (backend) => {
  let linked: LinkedDeployments;
  let sandbox: TestApp;
  let production: TestApp;
  beforeAll(async () => {
    linked = await startLinkedDeployments(backend);
    ({ sandbox, production } = linked);
  });
  afterAll(() => linked.close());

  it('a leaked write key cannot point a promoted subscription at its own endpoint while the switch is off', async () => {
    const org = await newOrganization(sandbox);
    const live = await issueApiKey(production.deps, {
      organizationName: org.name,
      scopes: ['read', 'write'],
    });
    const created = await api(sandbox, 'POST', '/v1/webhook-subscriptions', {
      key: org.key,
      body: { url: REVIEWED_URL, events: ['transfer.settled'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const result = promotionOf(await promoteSubscriptions(production, org.name));
    const id = result.promoted[0]?.subscription;
    expect(id).toBeDefined();
    const organization = await api(production, 'GET', '/v1/organization', { key: live.key });
    expect(organization.data.webhook_subscriptions_enabled).toBe(false);

    // A new URL is an endpoint nobody reviewed: refused as creating a subscription is, and not recorded.
    const repointed = await api(production, 'PATCH', `/v1/webhook-subscriptions/${id}`, {
      key: live.key,
      body: { url: ATTACKER_URL, events: ['*'] },
      headers: { 'idempotency-key': `repoint-${backend}` },
    });
    expect(repointed.statusCode, repointed.body).toBe(403);
    expect(repointed.data).toMatchObject({ code: 'subscriptions_not_enabled' });
    const kept = await api(production, 'GET', `/v1/webhook-subscriptions/${id}`, { key: live.key });
    expect(kept.data).toMatchObject({ url: REVIEWED_URL, events: ['transfer.settled'] });
    // What does not move the endpoint still changes.
    const described = await api(production, 'PATCH', `/v1/webhook-subscriptions/${id}`, {
      key: live.key,
      body: { description: 'Payouts', status: 'disabled' },
    });
    expect(described.statusCode, described.body).toBe(200);
    expect(described.data).toMatchObject({ url: REVIEWED_URL, description: 'Payouts', status: 'disabled' });

    // Once the operator turns the organization's own subscriptions on, it may move its endpoint.
    await runAdminCommand(production.deps, {
      name: 'orgs.set-webhooks',
      organizationId: live.record.organizationId,
      enabled: true,
    });
    const moved = await api(production, 'PATCH', `/v1/webhook-subscriptions/${id}`, {
      key: live.key,
      body: { url: ATTACKER_URL },
      headers: { 'idempotency-key': `repoint-${backend}` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.data.url).toBe(ATTACKER_URL);
  });

  it('skips a subscription pinned to a payload version or naming an event type unknown here, with its reason', async () => {
    const org = await newOrganization(sandbox);
    const live = await issueApiKey(production.deps, {
      organizationName: org.name,
      scopes: ['read', 'write', 'compliance', 'admin'],
    });
    const subscribe = async (url: string) => {
      const created = await api(sandbox, 'POST', '/v1/webhook-subscriptions', {
        key: org.key,
        body: { url, events: ['transfer.settled'] },
      });
      expect(created.statusCode, created.body).toBe(201);
      return created.data.id as string;
    };
    const current = await subscribe(PUBLIC_URL);
    const newerVersion = await subscribe(NEWER_VERSION_URL);
    const newerEvent = await subscribe(NEWER_EVENT_URL);
    // What a newer sandbox release would have stored: this release cannot write either through its API.
    await sandbox.db.store.query('UPDATE webhook_subscriptions SET api_version = $2 WHERE id = $1', [
      newerVersion,
      NEWER_PAYLOAD_VERSION,
    ]);
    await sandbox.db.store.query('UPDATE webhook_subscriptions SET events = $2::text[] WHERE id = $1', [
      newerEvent,
      ['transfer.settled', NEWER_EVENT_TYPE],
    ]);

    const result = promotionOf(await promoteSubscriptions(production, org.name));
    expect(result.promoted.map((p) => p.sandboxSubscription)).toEqual([current]);
    expect(result.skipped).toEqual([
      {
        sandboxSubscription: newerVersion,
        url: NEWER_VERSION_URL,
        reason: expect.stringContaining(`api_version ${NEWER_PAYLOAD_VERSION}`),
      },
      {
        sandboxSubscription: newerEvent,
        url: NEWER_EVENT_URL,
        reason: expect.stringContaining(NEWER_EVENT_TYPE),
      },
    ]);

    const listed = await api(production, 'GET', '/v1/webhook-subscriptions', { key: live.key });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.data.data).toEqual([
      expect.objectContaining({ url: PUBLIC_URL, api_version: PAYLOAD_VERSION_LATEST }),
    ]);
    const evidence = await api(production, 'GET', '/v1/evidence?kind=webhook_subscription.promote', {
      key: live.key,
    });
    expect(evidence.data.data[0].data.skipped).toEqual([
      { sandbox_subscription: newerVersion, reason: expect.stringContaining(NEWER_PAYLOAD_VERSION) },
      { sandbox_subscription: newerEvent, reason: expect.stringContaining(NEWER_EVENT_TYPE) },
    ]);
  });
});
