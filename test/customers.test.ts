import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, BACKENDS, newOrganizationKey, startTestApp, type TestApp } from './support/harness.ts';

describe.each(BACKENDS)('customers on %s', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.close());

  it('creates individual and business customers that start unverified', async () => {
    const person = await api(t, 'POST', '/v1/customers', {
      body: {
        type: 'individual',
        name: 'Wanjiku',
        phone: '+254711000111',
        email: 'w@example.com',
        metadata: { ref: '9' },
      },
    });
    expect(person.statusCode).toBe(201);
    expect(person.data).toMatchObject({
      object: 'customer',
      type: 'individual',
      name: 'Wanjiku',
      phone: '+254711000111',
      email: 'w@example.com',
      kyc_status: 'unverified',
      metadata: { ref: '9' },
    });
    expect(person.data.id).toMatch(/^cus_[0-9a-z]{26}$/);
    const business = await api(t, 'POST', '/v1/customers', { body: { type: 'business', name: 'Soko Ltd' } });
    expect(business.data).toMatchObject({ type: 'business', email: null, phone: null, metadata: {} });

    const fetched = await api(t, 'GET', `/v1/customers/${person.data.id}`);
    expect(fetched.data).toEqual(person.data);
    const businesses = await api(t, 'GET', '/v1/customers?type=business');
    expect(businesses.data.data.map((c: { type: string }) => c.type)).not.toContain('individual');
  });

  it('the sandbox seed has individual and business customers with KES and UGX wallets at zero', async () => {
    const customers = (await api(t, 'GET', '/v1/customers?limit=100')).data.data;
    const seeded = customers.filter((c: { metadata: Record<string, string> }) => c.metadata.seed === 'true');
    expect(new Set(seeded.map((c: { type: string }) => c.type))).toEqual(new Set(['individual', 'business']));
    const wallets = (await api(t, 'GET', '/v1/wallets?limit=100')).data.data;
    expect(new Set(wallets.map((w: { currency: string }) => w.currency))).toEqual(new Set(['KES', 'UGX']));
    for (const w of wallets) expect(w.balance.current).toMatch(/^0(\.00)?$/);
  });

  it("keeps each organization's customers to itself", async () => {
    const otherKey = await newOrganizationKey(t);
    const mine = await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Mine' } });
    expect((await api(t, 'GET', `/v1/customers/${mine.data.id}`, { key: otherKey })).statusCode).toBe(404);
    expect((await api(t, 'GET', '/v1/customers', { key: otherKey })).data.data).toEqual([]);
  });
});
