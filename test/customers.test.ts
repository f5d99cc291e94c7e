import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
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

  it('the sandbox seed has individual and business customers with funded KES, UGX and USDC wallets and a digital account', async () => {
    const customers = (await api(t, 'GET', '/v1/customers?limit=100')).data.data;
    const seeded = customers.filter((c: { metadata: Record<string, string> }) => c.metadata.seed === 'true');
    expect(new Set(seeded.map((c: { type: string }) => c.type))).toEqual(new Set(['individual', 'business']));
    const wallets = (await api(t, 'GET', '/v1/wallets?limit=100')).data.data as {
      id: string;
      owner: string;
      currency: string;
      balance: Record<string, string>;
      account_details: { account_number: string; bank_code: string } | null;
    }[];
    const nameOf = (id: string) => seeded.find((c: { id: string }) => c.id === id)?.name;
    const balances = wallets.map((w) => [
      nameOf(w.owner),
      w.currency,
      w.balance.available,
      w.balance.current,
    ]);
    expect(balances.sort()).toEqual(
      [
        ['Amina Wanjiru', 'KES', '25000.00', '25000.00'],
        ['Duka Traders Ltd', 'KES', '1000000.00', '1000000.00'],
        ['Duka Traders Ltd', 'UGX', '20000000', '20000000'],
        ['Duka Traders Ltd', 'USDC', '5000.000000', '5000.000000'],
        ['Joseph Okello', 'UGX', '500000', '500000'],
      ].sort(),
    );
    // Amina's KES wallet is the digital account: an account number under the sandbox's bank.
    const withDetails = wallets.filter((w) => w.account_details !== null);
    expect(withDetails.map((w) => [nameOf(w.owner), w.currency])).toEqual([['Amina Wanjiru', 'KES']]);
    expect(withDetails[0]?.account_details).toMatchObject({
      bank_code: 'MKOBASBX',
      account_number: expect.any(String),
    });
    // Each funding is a settled inbound transfer with its journal entry, and the ledger verifies clean.
    for (const w of wallets) {
      const transfers = (await api(t, 'GET', `/v1/transfers?wallet=${w.id}`)).data.data;
      expect(transfers).toMatchObject([
        { direction: 'inbound', status: 'settled', amount: w.balance.current },
      ]);
    }
    const verified = await runAdminCommand(t.deps, { name: 'ledger.verify' });
    expect(verified).toEqual({ name: 'ledger.verify', violations: [] });
  });

  it("keeps each organization's customers to itself", async () => {
    const otherKey = await newOrganizationKey(t);
    const mine = await api(t, 'POST', '/v1/customers', { body: { type: 'individual', name: 'Mine' } });
    expect((await api(t, 'GET', `/v1/customers/${mine.data.id}`, { key: otherKey })).statusCode).toBe(404);
    expect((await api(t, 'GET', '/v1/customers', { key: otherKey })).data.data).toEqual([]);
  });
});
