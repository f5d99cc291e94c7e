/**
 * The pilot environment: production behaviour (no sandbox routes, no seed) with `sk_pilot_` keys, and each
 * organization's volume caps per currency per UTC day decided in the ledger writer's batch: a transfer past
 * a cap is a 422 naming the cap and what remains, transfers racing for the last of a cap pass exactly as
 * far as it goes, and a transfer that moved no money gives its share back. Configuration is checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/app/admin.ts';
import { ConfigError } from '../src/config/variables.ts';
import { loadConfig } from '../src/config.ts';
import { decidePilotCap } from '../src/domain/decisions/pilotCaps.ts';
import { issueApiKey } from '../src/modules/apiKeys/useCases/keys.ts';
import { fundWallet } from '../src/modules/transfers/useCases/railCredits.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, mobileMoney } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';

describe.each(BACKENDS)('a pilot deployment on %s', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    // Two writer lanes on PostgreSQL, so racing transfers from different wallets may commit in parallel.
    t = await startTestApp(backend, 'pilot', backend === 'postgres' ? { ledgerWriterLanes: 2 } : {});
  });
  afterAll(async () => {
    await t.close();
  });

  /** A new organization (its key issued directly, as the harness does), with caps for this test. */
  async function organization(transfersPerDayMax: number, kesMax: bigint): Promise<TestOrganization> {
    t.deps.pilotCaps = { transfersPerDayMax, amountPerDayMaxMinor: { KES: kesMax } };
    return newOrganization(t);
  }

  async function wallet(org: TestOrganization, amount: string, currency = 'KES'): Promise<string> {
    const owner = await api(t, 'POST', '/v1/customers', {
      key: org.key,
      body: { type: 'individual', name: 'Asha' },
    });
    const created = await api(t, 'POST', '/v1/wallets', {
      key: org.key,
      body: { owner: owner.data.id, currency },
    });
    expect(created.statusCode, created.body).toBe(201);
    await t.deps.store.transaction((tx) =>
      fundWallet(tx, t.deps, org.organizationId, created.data.id, amount, {}),
    );
    return created.data.id;
  }

  const pay = (org: TestOrganization, source: string, amount: string, currency = 'KES') =>
    api(t, 'POST', '/v1/transfers', {
      key: org.key,
      body: { source, destination: mobileMoney('+254711000321'), amount, currency },
    });

  it('issues sk_pilot_ keys, refuses the other environments’ keys, and has no sandbox routes', async () => {
    expect(t.key).toMatch(/^sk_pilot_[A-Za-z0-9]{32}$/);
    expect((await api(t, 'GET', '/v1/wallets')).statusCode).toBe(200);
    for (const key of [
      'sk_live_0123456789abcdefABCDEF0123456789',
      'sk_sandbox_0123456789abcdefABCDEF01234567',
    ]) {
      const refused = await api(t, 'GET', '/v1/wallets', { key });
      expect(refused.statusCode).toBe(401);
      expect(refused.data.code).toBe('api_key_environment_mismatch');
      expect(refused.data.detail).toMatch(/^This is the pilot environment/);
    }
    const sandboxRoute = await api(t, 'POST', '/v1/sandbox/events', { body: { type: 'transfer.settled' } });
    expect(sandboxRoute.statusCode).toBe(404);
  });

  it('refuses a transfer past the day’s amount, naming the cap and what remains; events say pilot', async () => {
    const org = await organization(100, 100_00n);
    const source = await wallet(org, '500.00');
    const first = await pay(org, source, '60.00');
    expect(first.statusCode, first.body).toBe(201);
    const over = await pay(org, source, '50.00');
    expect(over.statusCode).toBe(422);
    expect(over.data).toMatchObject({
      code: 'pilot_cap_exceeded',
      param: 'amount',
      cap: 'daily_amount',
      remaining: '40.00',
    });
    expect(over.data.detail).toContain('100.00 KES sent per organization per UTC day; 40.00 KES remains');
    expect((await pay(org, source, '40.00')).statusCode).toBe(201);
    const events = await api(t, 'GET', `/v1/events?resource=${first.data.id}`, { key: org.key });
    expect(events.data.data[0].environment).toBe('pilot');
    // A currency the pilot has no amount cap for carries nothing.
    const ugx = await wallet(org, '50000', 'UGX');
    const refused = await pay(org, ugx, '1000', 'UGX');
    expect(refused.data).toMatchObject({ code: 'pilot_cap_exceeded', cap: 'daily_amount', remaining: '0' });
    expect(refused.data.detail).toContain('no amount cap for UGX');
    await expectLedgerHealthy(t);
  });

  it('transfers racing for the last of the amount cap pass exactly as far as it goes', async () => {
    const org = await organization(100, 100_00n);
    const wallets = await Promise.all([1, 2, 3, 4, 5, 6].map(() => wallet(org, '100.00')));
    expect((await pay(org, wallets[0] as string, '60.00')).statusCode).toBe(201);
    // 40.00 remains: six racing transfers of 20.00 from six wallets, so exactly two fit.
    const raced = await Promise.all(wallets.map((w) => pay(org, w, '20.00')));
    const passed = raced.filter((r) => r.statusCode === 201);
    const refused = raced.filter((r) => r.statusCode === 422);
    expect(passed).toHaveLength(2);
    expect(refused).toHaveLength(4);
    for (const r of refused)
      expect(r.data).toMatchObject({ code: 'pilot_cap_exceeded', cap: 'daily_amount', remaining: '0.00' });
    await expectLedgerHealthy(t);
  });

  it('two transfers racing for the last transfer of the count cap: exactly one passes', async () => {
    const org = await organization(2, 1_000_00n);
    const [a, b, c] = await Promise.all([wallet(org, '50.00'), wallet(org, '50.00'), wallet(org, '50.00')]);
    expect((await pay(org, a as string, '5.00')).statusCode).toBe(201);
    const raced = await Promise.all([pay(org, b as string, '5.00'), pay(org, c as string, '5.00')]);
    expect(raced.map((r) => r.statusCode).sort()).toEqual([201, 422]);
    const refused = raced.find((r) => r.statusCode === 422);
    expect(refused?.data).toMatchObject({
      code: 'pilot_cap_exceeded',
      cap: 'daily_transfer_count',
      remaining: '0',
    });
    expect(refused?.data.detail).toContain('2 KES transfers per organization per UTC day; 0 remain');
    // A transfer canceled before hand-off moved no money: its count and amount come back.
    const passed = raced.find((r) => r.statusCode === 201);
    const canceled = await api(t, 'POST', `/v1/transfers/${passed?.data.id}/cancel`, { key: org.key });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect((await pay(org, c as string, '5.00')).statusCode).toBe(201);
    expect((await pay(org, b as string, '5.00')).statusCode).toBe(422);
    // Caps are the organization's own: another organization's day is untouched.
    const other = await organization(2, 1_000_00n);
    expect((await pay(other, await wallet(other, '50.00'), '5.00')).statusCode).toBe(201);
    await expectLedgerHealthy(t);
  });

  /** A member with a key of their own, issued directly: the CLI issues none while launch gates are open. */
  async function member(org: TestOrganization, roles: string[]): Promise<{ key: string }> {
    const email = `${roles.join('-')}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    await runAdminCommand(t.deps, { name: 'members.add', organization: org.name, email, roles });
    return { key: (await issueApiKey(t.deps, { organizationName: org.name, memberEmail: email })).key };
  }

  it('a payout approved after the day’s cap was lowered fails pilot_cap_exceeded at its release', async () => {
    const org = await organization(100, 1_000_00n);
    const first = await member(org, ['admin']);
    const second = await member(org, ['admin']);
    // A pilot's policy changes wait for a second admin (the default rule): proposed, then approved.
    const proposed = await api(t, 'PUT', '/v1/policies', {
      key: first.key,
      body: {
        rules: [
          {
            id: 'four_eyes',
            match: { amount: [{ currency: 'KES', gte: '100.00' }] },
            action: 'require_approval',
            approval: { quorum: 1, roles: ['approver'] },
          },
        ],
      },
    });
    expect(proposed.statusCode, proposed.body).toBe(202);
    const policyApproval = proposed.data.approval as string;
    const applied = await api(t, 'POST', `/v1/approvals/${policyApproval}/approve`, {
      key: second.key,
      body: {},
    });
    expect(applied.statusCode, applied.body).toBe(200);
    const initiator = await member(org, ['initiator']);
    const approver = await member(org, ['approver']);
    const source = await wallet(org, '500.00');
    const payout = await pay({ ...org, key: initiator.key }, source, '300.00');
    expect(payout.data.status, payout.body).toBe('pending_approval');
    // The operator lowers the caps (a restart with new MKOBA_PILOT_* values) while it waits.
    t.deps.pilotCaps = { transfersPerDayMax: 100, amountPerDayMaxMinor: { KES: 200_00n } };
    const vote = await api(t, 'POST', `/v1/approvals/${payout.data.approval}/approve`, {
      key: approver.key,
      body: {},
    });
    expect(vote.statusCode, vote.body).toBe(200);
    const read = await api(t, 'GET', `/v1/transfers/${payout.data.id}`, { key: org.key });
    expect(read.data).toMatchObject({ status: 'failed', failure_code: 'pilot_cap_exceeded' });
    // Given back to the day: a payout within the lowered cap goes through.
    expect((await pay(org, source, '150.00')).statusCode).toBe(201);
    await expectLedgerHealthy(t);
  });
});

describe('pilot configuration', () => {
  const base = { MKOBA_ENV: 'pilot', DATABASE_URL: 'postgres://127.0.0.1/pilot' };

  it('behaves as production: needs DATABASE_URL and https for its public URL', () => {
    expect(() => loadConfig({ MKOBA_ENV: 'pilot' })).toThrow(
      /DATABASE_URL: is required when MKOBA_ENV=pilot/,
    );
    expect(() => loadConfig({ ...base, MKOBA_PUBLIC_URL: 'http://api.example.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, MKOBA_WEBHOOK_ALLOW_PRIVATE: '1' })).toThrow(ConfigError);
  });

  it('takes its caps from the environment, each with its unit, over the defaults', () => {
    const defaults = loadConfig(base).pilotCaps;
    expect(defaults?.transfersPerDayMax).toBe(500);
    expect(defaults?.amountPerDayMaxMinor.KES).toBe(1_000_000_00n);
    expect(defaults?.amountPerDayMaxMinor.NGN).toBeUndefined();
    const set = loadConfig({
      ...base,
      MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: '25',
      MKOBA_PILOT_AMOUNT_PER_DAY_MAX: 'KES:5000.50, NGN:100000.00,UGX:0',
    }).pilotCaps;
    expect(set).toMatchObject({ transfersPerDayMax: 25 });
    expect(set?.amountPerDayMaxMinor).toMatchObject({
      KES: 500_050n,
      NGN: 10_000_000n,
      UGX: 0n,
      USD: 10_000_00n,
    });
    for (const bad of ['KES', 'KES:1.001', 'XYZ:10', 'KES:-1']) {
      expect(() => loadConfig({ ...base, MKOBA_PILOT_AMOUNT_PER_DAY_MAX: bad })).toThrow(
        /^MKOBA_PILOT_AMOUNT_PER_DAY_MAX: /,
      );
    }
    expect(() => loadConfig({ ...base, MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: 'many' })).toThrow(
      /^MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: /,
    );
    expect(() => loadConfig({ MKOBA_PILOT_TRANSFERS_PER_DAY_MAX: '5' })).toThrow(
      /applies only when MKOBA_ENV=pilot/,
    );
    expect(loadConfig({}).pilotCaps).toBeUndefined();
  });

  it('links pilot and production to the sandbox’s database, and nothing else', () => {
    const url = 'postgres://127.0.0.1/sandbox';
    expect(loadConfig({ ...base, MKOBA_SANDBOX_DATABASE_URL: url }).sandboxDatabaseUrl).toBe(url);
    expect(() => loadConfig({ MKOBA_SANDBOX_DATABASE_URL: url })).toThrow(/^MKOBA_SANDBOX_DATABASE_URL: /);
    expect(() => loadConfig({ ...base, MKOBA_SANDBOX_DATABASE_URL: base.DATABASE_URL })).toThrow(
      /not this deployment’s own DATABASE_URL/,
    );
    expect(() => loadConfig({ ...base, MKOBA_SANDBOX_DATABASE_URL: 'mysql://x' })).toThrow(ConfigError);
  });

  it('decides the count before the amount, and never lets the day go past either', () => {
    const caps = { transfersPerDayMax: 3, amountPerDayMaxMinor: { KES: 1_000n } };
    expect(decidePilotCap(caps, 'KES', 400n, { transferCount: 2, sentMinor: 600n })).toBeUndefined();
    expect(decidePilotCap(caps, 'KES', 401n, { transferCount: 2, sentMinor: 600n })).toEqual({
      cap: 'daily_amount',
      limit: 1_000n,
      remaining: 400n,
    });
    expect(decidePilotCap(caps, 'KES', 1n, { transferCount: 3, sentMinor: 0n })).toEqual({
      cap: 'daily_transfer_count',
      limit: 3n,
      remaining: 0n,
    });
    expect(decidePilotCap(caps, 'USD', 1n, { transferCount: 0, sentMinor: 0n })?.cap).toBe('daily_amount');
  });
});
