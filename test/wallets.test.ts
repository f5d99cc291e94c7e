import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  BACKENDS,
  createCustomer,
  newOrganizationKey,
  startTestApp,
  type TestApp,
} from './support/harness.ts';

describe.each(BACKENDS)('wallets on %s', (backend) => {
  let t: TestApp;
  let owner: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    owner = await createCustomer(t);
  });
  afterAll(() => t.close());

  it('creates a wallet with zero balances at the currency exponent', async () => {
    const response = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'KES', metadata: { customer_ref: 'A-1' } },
    });
    expect(response.statusCode).toBe(201);
    expect(response.headers['request-id']).toMatch(/^req_/);
    expect(response.data).toMatchObject({
      object: 'wallet',
      owner,
      currency: 'KES',
      status: 'active',
      balance: { available: '0.00', pending: '0.00', current: '0.00' },
      metadata: { customer_ref: 'A-1' },
    });
    expect(response.data.id).toMatch(/^wallet_[0-9a-z]{26}$/);

    const fetched = await api(t, 'GET', `/v1/wallets/${response.data.id}`);
    expect(fetched.statusCode).toBe(200);
    expect(fetched.data).toEqual(response.data);

    const balance = await api(t, 'GET', `/v1/wallets/${response.data.id}/balance`);
    expect(balance.data).toEqual({
      object: 'balance',
      wallet: response.data.id,
      currency: 'KES',
      available: '0.00',
      pending: '0.00',
      current: '0.00',
    });
  });

  it('renders each currency at its own exponent', async () => {
    for (const [currency, zero] of [
      ['UGX', '0'],
      ['USDC', '0.000000'],
      ['GBP', '0.00'],
    ]) {
      const response = await api(t, 'POST', '/v1/wallets', { body: { owner, currency } });
      expect(response.statusCode).toBe(201);
      expect(response.data.balance.available).toBe(zero);
    }
  });

  it('rejects an unknown currency, a malformed owner and unknown fields, naming the field', async () => {
    const badCurrency = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'XYZ' } });
    expect(badCurrency.statusCode).toBe(400);
    expect(badCurrency.headers['content-type']).toContain('application/problem+json');
    expect(badCurrency.data).toMatchObject({ code: 'validation_error', param: 'currency', status: 400 });

    const lower = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'kes' } });
    expect(lower.data.param).toBe('currency');

    const badOwner = await api(t, 'POST', '/v1/wallets', { body: { owner: 'wallet_123', currency: 'KES' } });
    expect(badOwner.statusCode).toBe(400);
    expect(badOwner.data.param).toBe('owner');

    const unknown = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES', colour: 'red' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.data).toMatchObject({ code: 'validation_error', param: 'colour' });
    expect(unknown.data.errors[0]).toMatchObject({ param: 'colour', code: 'unknown_field' });

    const missing = await api(t, 'POST', '/v1/wallets', { body: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.data.errors.map((e: { param: string }) => e.param).sort()).toEqual(['currency', 'owner']);
  });

  it('bounds metadata', async () => {
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const response = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'KES', metadata: tooMany },
    });
    expect(response.statusCode).toBe(400);
    expect(response.data.param).toBe('metadata');

    const longValue = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'KES', metadata: { note: 'x'.repeat(501) } },
    });
    expect(longValue.data.param).toBe('metadata.note');

    const nonString = await api(t, 'POST', '/v1/wallets', {
      body: { owner, currency: 'KES', metadata: { count: 3 } },
    });
    expect(nonString.data).toMatchObject({ code: 'validation_error', param: 'metadata.count' });
  });

  it('404s a well-formed owner that does not exist or belongs to another organization', async () => {
    const ghost = await api(t, 'POST', '/v1/wallets', {
      body: { owner: 'cus_01m80v1f31hmw57sgkdkcnyxra', currency: 'KES' },
    });
    expect(ghost.statusCode).toBe(404);
    expect(ghost.data).toMatchObject({ code: 'resource_missing', param: 'owner' });

    const otherKey = await newOrganizationKey(t);
    const otherCustomer = await createCustomer(t, otherKey);
    const foreign = await api(t, 'POST', '/v1/wallets', { body: { owner: otherCustomer, currency: 'KES' } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.data.code).toBe('resource_missing');
  });

  it("hides another organization's wallet behind a 404", async () => {
    const created = await api(t, 'POST', '/v1/wallets', { body: { owner, currency: 'KES' } });
    const otherKey = await newOrganizationKey(t);
    for (const url of [`/v1/wallets/${created.data.id}`, `/v1/wallets/${created.data.id}/balance`]) {
      const response = await api(t, 'GET', url, { key: otherKey });
      expect(response.statusCode).toBe(404);
      expect(response.data.code).toBe('resource_missing');
    }
    const list = await api(t, 'GET', '/v1/wallets', { key: otherKey });
    expect(list.data.data).toEqual([]);
  });

  it('400s a malformed wallet id and 404s an unknown one', async () => {
    const malformed = await api(t, 'GET', '/v1/wallets/cus_01m80v1f31hmw57sgkdkcnyxra');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.data.param).toBe('id');
    const unknown = await api(t, 'GET', '/v1/wallets/wallet_01m80v1f31hmw57sgkdkcnyxra');
    expect(unknown.statusCode).toBe(404);
  });

  it('pages newest first with a cursor and filters by owner, currency and creation time', async () => {
    const pageOwner = await createCustomer(t, t.key, 'Pager');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await api(t, 'POST', '/v1/wallets', {
        body: { owner: pageOwner, currency: i % 2 ? 'UGX' : 'KES' },
      });
      ids.push(r.data.id);
    }
    const newestFirst = [...ids].reverse();
    const first = await api(t, 'GET', `/v1/wallets?owner=${pageOwner}&limit=2`);
    expect(first.statusCode).toBe(200);
    expect(first.data).toMatchObject({ object: 'list', has_more: true });
    expect(first.data.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(0, 2));
    const second = await api(
      t,
      'GET',
      `/v1/wallets?owner=${pageOwner}&limit=2&starting_after=${first.data.next_cursor}`,
    );
    expect(second.data.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(2, 4));
    const third = await api(
      t,
      'GET',
      `/v1/wallets?owner=${pageOwner}&limit=2&starting_after=${second.data.next_cursor}`,
    );
    expect(third.data).toMatchObject({ has_more: false, next_cursor: null });
    expect(third.data.data.map((w: { id: string }) => w.id)).toEqual(newestFirst.slice(4));

    const ugx = await api(t, 'GET', `/v1/wallets?owner=${pageOwner}&currency=UGX`);
    expect(ugx.data.data).toHaveLength(2);

    const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    const none = await api(t, 'GET', `/v1/wallets?owner=${pageOwner}&created[gte]=${future}`);
    expect(none.data.data).toEqual([]);
    const all = await api(t, 'GET', `/v1/wallets?owner=${pageOwner}&created[lte]=${future}`);
    expect(all.data.data).toHaveLength(5);
  });

  it('validates list parameters', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['starting_after=nope', 'starting_after'],
      ['created[gte]=yesterday', 'created[gte]'],
      ['currency=XXX', 'currency'],
      ['bogus=1', 'bogus'],
    ]) {
      const response = await api(t, 'GET', `/v1/wallets?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.data.param, query).toBe(param);
    }
  });
});
