import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_ORGANIZATION_NAME } from '../src/app/seed.ts';
import { findIdempotencyRecord } from '../src/store/repositories/idempotency.ts';
import { findOrganizationByName } from '../src/store/repositories/organizations.ts';
import { pruneExpiredIdempotencyRecords } from '../src/workers/idempotencyPruner.ts';
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

describe.each(BACKENDS)('Idempotency-Key on %s', (backend) => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    // One test subscribes 127.0.0.1: local development's opt-in.
    t = await startTestApp(backend, 'sandbox', { allowPrivateWebhookUrls: true });
    owner = await createCustomer(t);
  });
  afterAll(() => t.close());

  const walletCount = async (forOwner: string) =>
    (await api(t, 'GET', `/v1/wallets?owner=${forOwner}&limit=100`)).data.data.length as number;

  it('replays the original response for a retry with the same key and body', async () => {
    const headers = { 'idempotency-key': 'wallet-create-1' };
    const first = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES' }, headers });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // Key order in the body does not change the fingerprint.
    const second = await api(t, 'POST', '/v1/wallets', { body: { currency: 'KES', owner }, headers });
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.data).toEqual(first.data);
    expect(await walletCount(owner)).toBe(1);
  });

  it('answers 422 idempotency_key_reused when the key comes back with another body or path', async () => {
    const headers = { 'idempotency-key': 'reused-key' };
    await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES' }, headers });
    const otherBody = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'UGX' }, headers });
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.data).toMatchObject({ code: 'idempotency_key_reused', param: 'Idempotency-Key' });
    const otherPath = await api(t, 'POST', '/v1/customers', {
      body: { type: 'individual', name: 'X' },
      headers,
    });
    expect(otherPath.statusCode).toBe(422);
  });

  it('scopes keys per organization', async () => {
    const otherKey = await newOrganizationKey(t);
    const otherOwner = await createCustomer(t, otherKey);
    const headers = { 'idempotency-key': 'shared-by-two-orgs' };
    const mine = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'UGX' }, headers });
    const theirs = await api(t, 'POST', '/v1/wallets', {
      key: otherKey,
      body: { owner: otherOwner, currency: 'UGX' },
      headers,
    });
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.data.id).not.toBe(mine.data.id);
  });

  it('records a failure the operation raised and replays it; validation failures are not recorded', async () => {
    const headers = { 'idempotency-key': 'missing-owner' };
    const body = { owner: 'cus_01m80v1f31hmw57sgkdkcnyxra', currency: 'KES' };
    const first = await api(t, 'POST', '/v1/wallets', { body, headers });
    expect(first.statusCode).toBe(404);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await api(t, 'POST', '/v1/wallets', { body, headers });
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.data.code).toBe('resource_missing');

    const invalidHeaders = { 'idempotency-key': 'fix-and-retry' };
    const invalid = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'NOPE' },
      headers: invalidHeaders,
    });
    expect(invalid.statusCode).toBe(400);
    const corrected = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'KES' },
      headers: invalidHeaders,
    });
    expect(corrected.statusCode).toBe(201);
  });

  it('answers a retry of an accepted transfer from its record, even once its wallet is frozen', async () => {
    // A transfer's key is read by the ledger writer, in the transaction that claims it, not on the way in.
    const source = await fundedWallet(t, '100.00');
    const body = { source, destination: mobileMoney('+254711000777'), amount: '10.00', currency: 'KES' };
    const headers = { 'idempotency-key': 'transfer-frozen-retry' };
    const first = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(first.statusCode, first.body).toBe(201);
    const freeze = await api(t, 'POST', `/v1/wallets/${source}/freeze`, {
      key: await complianceKey(t),
      body: { reason: 'fraud_suspected' },
    });
    expect(freeze.statusCode, freeze.body).toBe(200);

    const again = await api(t, 'POST', '/v1/transfers', { body, headers });
    expect(again.statusCode, again.body).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.data).toEqual(first.data);
    const other = await api(t, 'POST', '/v1/transfers', { body: { ...body, amount: '11.00' }, headers });
    expect(other.statusCode, other.body).toBe(422);
    expect(other.data.code).toBe('idempotency_key_reused');
    const fresh = await api(t, 'POST', '/v1/transfers', {
      body,
      headers: { 'idempotency-key': 'transfer-frozen-new' },
    });
    expect(fresh.data.code, fresh.body).toBe('wallet_not_active');
    const listed = await api(t, 'GET', `/v1/transfers?wallet=${source}&limit=10`);
    const paidOut = listed.data.data.filter(
      (transfer: { source: string | null }) => transfer.source === source,
    );
    expect(paidOut.map((transfer: { id: string }) => transfer.id)).toEqual([first.data.id]);
  });

  it('validates the key itself', async () => {
    for (const key of ['x'.repeat(256), 'has space', 'tab\tkey', 'ünïcode']) {
      const response = await api(t, 'POST', '/v1/wallets', {
        body: { owner, currency: 'KES' },
        headers: { 'idempotency-key': key },
      });
      expect(response.statusCode, key).toBe(400);
      expect(response.data.param, key).toBe('Idempotency-Key');
    }
  });

  it('validates the key the same way on POST, PATCH and DELETE, storing nothing for a bad one', async () => {
    const organization = await findOrganizationByName(t.deps.store, SANDBOX_ORGANIZATION_NAME);
    if (!organization) throw new Error('no sandbox organization');
    const created = await api(t, 'POST', '/v1/webhook-subscriptions', {
      body: { url: 'http://127.0.0.1:9/hook', events: ['transfer.settled'], description: 'before' },
    });
    expect(created.statusCode).toBe(201);
    const url = `/v1/webhook-subscriptions/${created.data.id}`;
    const writes: { method: 'POST' | 'PATCH' | 'DELETE'; url: string; body?: unknown }[] = [
      {
        method: 'POST',
        url: '/v1/webhook-subscriptions',
        body: { url: 'http://127.0.0.1:9/x', events: ['*'] },
      },
      { method: 'PATCH', url, body: { description: 'after' } },
      { method: 'DELETE', url },
    ];
    for (const write of writes) {
      for (const key of ['x'.repeat(256), 'has space', 'tab\tkey', 'ünïcode']) {
        const at = `${write.method} with ${JSON.stringify(key.slice(0, 20))}`;
        const response = await api(t, write.method, write.url, {
          body: write.body,
          headers: { 'idempotency-key': key },
        });
        expect(response.statusCode, at).toBe(400);
        expect(response.data, at).toMatchObject({ code: 'validation_error', param: 'Idempotency-Key' });
        expect(await findIdempotencyRecord(t.deps.store, organization.id, key), at).toBeUndefined();
      }
    }
    const after = await api(t, 'GET', url);
    expect(after.statusCode).toBe(200);
    expect(after.data).toMatchObject({ description: 'before', status: created.data.status });
    const subscriptions = await api(t, 'GET', '/v1/webhook-subscriptions?limit=100');
    expect(subscriptions.data.data).toHaveLength(1);
  });

  it('lets exactly one of 20 concurrent requests with one key create the wallet', async () => {
    const racer = await createCustomer(t, t.key, 'Racer');
    const headers = { 'idempotency-key': `race-${backend}` };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        api(t, 'POST', '/v1/wallets', { body: { owner: racer, currency: 'KES' }, headers }),
      ),
    );
    const created = responses.filter((r) => r.statusCode === 201);
    const inFlight = responses.filter((r) => r.statusCode === 409);
    expect(created.length + inFlight.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    const ids = new Set(created.map((r) => r.data.id));
    expect(ids.size).toBe(1);
    for (const r of inFlight) {
      expect(r.data.code).toBe('idempotency_key_in_flight');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await walletCount(racer)).toBe(1);
  });

  it('prunes records past the retention window, after which the key is fresh', async () => {
    const headers = { 'idempotency-key': 'old-key' };
    const first = await api(t, 'POST', '/v1/customers', {
      body: { type: 'business', name: 'Old Co' },
      headers,
    });
    const later = { ...t.deps, now: () => new Date(Date.now() + 25 * 3_600_000) };
    expect(await pruneExpiredIdempotencyRecords(later)).toBeGreaterThanOrEqual(1);
    const again = await api(t, 'POST', '/v1/customers', {
      body: { type: 'business', name: 'Old Co' },
      headers,
    });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.data.id).not.toBe(first.data.id);
  });
});
