/**
 * Custody reserves from Fireblocks for the safeguarding check, over real HTTP: an organization with
 * Fireblocks as its custody partner and a `custody_wallet` trust account at Fireblocks has the closed day's
 * closing balance read from its wallets' vault accounts (the Fireblocks simulator, a real server) by the
 * custody reserve pass in the hour after midnight, recorded with the balance query that read it; the daily
 * check then judges it. A vault short of customer money is a shortfall; a Fireblocks that does not answer
 * records a failed query and no figure (the day is `missing_balance`), and the next pass reads it.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dayOf } from '../src/domain/days.ts';
import { runCustodyReservePassOnce } from '../src/modules/railPartners/custodyWorkers.ts';
import { fireblocksRequest } from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import { railPartnerDirectory } from '../src/modules/railPartners/useCases/directory.ts';
import { runSafeguardingChecks } from '../src/modules/treasury/useCases/safeguarding.ts';
import { type FireblocksSimulator, startFireblocksSimulator } from '../src/simulators/fireblocks/index.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { fundedWallet } from './support/ledger.ts';
import { newOrganization } from './support/organizations.ts';

const CHECKS_MAX = 10_000;

describe.each(BACKENDS)('Fireblocks custody reserves on %s', (backend) => {
  let t: TestApp;
  const sims: FireblocksSimulator[] = [];
  const realNow = () => new Date();
  let day: string;
  let today: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    today = dayOf(new Date());
    day = addDays(today, -1);
  });
  afterEach(() => {
    t.deps.now = realNow;
  });
  afterAll(async () => {
    for (const sim of sims) await sim.close();
    await t?.close();
  });

  async function at<T>(onDay: string, time: string, fn: () => Promise<T>): Promise<T> {
    t.deps.now = () => new Date(`${onDay}T${time}Z`);
    try {
      return await fn();
    } finally {
      t.deps.now = realNow;
    }
  }

  /**
   * An organization with its own Fireblocks workspace (a simulator of its own, or `shared` with another
   * organization), a custody wallet trust account at Fireblocks for USDC, and two USDC wallets funded on the
   * day, 600 and 400, each with its vault.
   */
  async function custodied(shared?: FireblocksSimulator) {
    const sim = shared ?? (await startFireblocksSimulator({ stepMs: 5, tenantId: randomUUID() }));
    if (!shared) sims.push(sim);
    const config = {
      fetch: (url: string, init?: unknown) => fetch(url, init as RequestInit),
      baseUrl: sim.baseUrl,
      apiKey: sim.credentials.apiKey,
      privateKey: sim.credentials.secretKey,
      webhookPublicKey: sim.webhookPublicKey,
      sourceVaultAccountId: '',
    };
    const source = await fireblocksRequest(config, 'POST', '/vault/accounts', { name: 'treasury' });
    const sourceId = (source.body as { id: string }).id;
    await fireblocksRequest(config, 'POST', `/vault/accounts/${sourceId}/USDC`);
    // The payout float is the rail's, not trust: it is not counted.
    sim.setBalance(sourceId, 'USDC', '5000');
    const org = await newOrganization(t);
    const partner = await api(t, 'POST', '/v1/rail-partners', {
      key: org.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: sim.baseUrl,
          source_vault_account_id: sourceId,
          webhook_public_key: sim.webhookPublicKey,
        },
        credentials: { api_key: sim.credentials.apiKey, private_key: sim.credentials.secretKey },
      },
    });
    expect(partner.statusCode, partner.body).toBe(201);
    const trust = await api(t, 'POST', '/v1/trust-accounts', {
      key: org.key,
      body: { currency: 'USDC', bank: 'Fireblocks', account_reference: `ws-${org.name}`, active_from: day },
    });
    expect(trust.statusCode, trust.body).toBe(201);
    const vaults: string[] = [];
    for (const amount of ['600.000000', '400.000000']) {
      const wallet = await at(day, '10:00:00', () => fundedWallet(t, amount, 'USDC', org.key));
      const issued = await api(t, 'POST', `/v1/wallets/${wallet}/deposit-addresses`, {
        key: org.key,
        body: { network: vaults.length === 0 ? 'ethereum' : 'polygon' },
      });
      expect(issued.statusCode, issued.body).toBe(201);
      const name = encodeURIComponent(`mkoba ${wallet}`);
      const found = await fireblocksRequest(config, 'GET', `/vault/accounts_paged?namePrefix=${name}`);
      vaults.push((found.body as { accounts: Array<{ id: string }> }).accounts[0]?.id ?? '');
    }
    return { sim, org, partner: partner.data.id as string, trust: trust.data.id as string, vaults };
  }

  const pass = (time = '00:10:00') =>
    at(today, time, () => runCustodyReservePassOnce(t.deps, railPartnerDirectory(t.deps)));
  const check = () => at(today, '12:00:00', () => runSafeguardingChecks(t.deps, CHECKS_MAX));
  const balancesOf = async (key: string, trust: string) =>
    (await api(t, 'GET', `/v1/safeguarding/balances?trust_account=${trust}`, { key })).data.data as any[];
  const reportOfDay = async (key: string) => {
    const listed = await api(t, 'GET', '/v1/safeguarding/reports?currency=USDC', { key });
    return (listed.data.data as any[]).find((r) => r.date === day);
  };
  const queriesOf = async (key: string, partner: string) =>
    (await api(t, 'GET', `/v1/rail-partners/${partner}/balance-queries`, { key })).data.data as any[];

  it('records the vaults total as the closed day’s closing balance, and the check finds it ok', async () => {
    const { sim, org, partner, trust, vaults } = await custodied();
    sim.setBalance(vaults[0] as string, 'USDC', '600');
    sim.setBalance(vaults[1] as string, 'USDC_POLYGON_NXTB', '400');
    expect(await pass()).toBeGreaterThanOrEqual(1);
    const [balance] = await balancesOf(org.key, trust);
    expect(balance).toMatchObject({
      date: day,
      closing_balance: '1000.000000',
      status: 'current',
      created_by: `rail_partner:${partner}`,
      source: { type: 'custodian', rail_partner: partner, read_at: expect.any(String) },
    });
    const [query] = await queriesOf(org.key, partner);
    expect(query).toMatchObject({ id: balance.source.balance_query, status: 'reported' });
    expect(query.accounts).toHaveLength(2);
    // Read once: a second pass in the window asks nothing more.
    await pass('00:20:00');
    expect(await queriesOf(org.key, partner)).toHaveLength(1);
    expect(await balancesOf(org.key, trust)).toHaveLength(1);
    await check();
    expect(await reportOfDay(org.key)).toMatchObject({
      status: 'ok',
      customer_money: '1000.000000',
      trust_balance: '1000.000000',
    });
  });

  it('counts only its own wallets’ vaults in a workspace another organization shares', async () => {
    const first = await custodied();
    const second = await custodied(first.sim);
    first.sim.setBalance(first.vaults[0] as string, 'USDC', '600');
    first.sim.setBalance(first.vaults[1] as string, 'USDC_POLYGON_NXTB', '400');
    first.sim.setBalance(second.vaults[0] as string, 'USDC', '9000');
    first.sim.setBalance(second.vaults[1] as string, 'USDC_POLYGON_NXTB', '1');
    await pass();
    expect((await balancesOf(first.org.key, first.trust))[0]).toMatchObject({
      closing_balance: '1000.000000',
    });
    expect((await balancesOf(second.org.key, second.trust))[0]).toMatchObject({
      closing_balance: '9001.000000',
    });
    // Neither sees the other's vaults in its balance queries, asked by the pass or by an admin.
    const [read] = await queriesOf(first.org.key, first.partner);
    expect(read.accounts).toHaveLength(2);
    const asked = await api(t, 'POST', `/v1/rail-partners/${second.partner}/balance-queries`, {
      key: second.org.key,
    });
    expect(asked.statusCode, asked.body).toBe(201);
    expect(asked.data.accounts.map((a: any) => a.available).sort()).toEqual(['1.000000', '9000.000000']);
  });

  it('a vault short of customer money is a shortfall', async () => {
    const { sim, org, trust, vaults } = await custodied();
    sim.setBalance(vaults[0] as string, 'USDC', '600');
    sim.setBalance(vaults[1] as string, 'USDC_POLYGON_NXTB', '350.5');
    await pass();
    expect((await balancesOf(org.key, trust))[0]).toMatchObject({ closing_balance: '950.500000' });
    await check();
    expect(await reportOfDay(org.key)).toMatchObject({
      status: 'shortfall',
      trust_balance: '950.500000',
      difference: '-49.500000',
    });
  });

  it('Fireblocks down: a failed query, no figure (missing_balance), and the next pass reads it', async () => {
    const { sim, org, partner, trust, vaults } = await custodied();
    sim.setBalance(vaults[0] as string, 'USDC', '600');
    sim.setBalance(vaults[1] as string, 'USDC_POLYGON_NXTB', '400');
    sim.failNext(1, 503);
    await expect(pass()).rejects.toThrow(/custody reserves not read from .*failed/);
    expect(await balancesOf(org.key, trust)).toEqual([]);
    expect(await queriesOf(org.key, partner)).toMatchObject([
      { status: 'failed', failure_code: 'partner_unavailable', accounts: null },
    ]);
    // Past the window nothing is read: a figure read at noon would not be the day's close.
    expect(await pass('01:30:00')).toBe(0);
    expect(await queriesOf(org.key, partner)).toHaveLength(1);
    await check();
    expect(await reportOfDay(org.key)).toMatchObject({ status: 'missing_balance', trust_balance: null });
    await pass('00:40:00');
    expect((await balancesOf(org.key, trust))[0]).toMatchObject({ closing_balance: '1000.000000' });
    // The figure judges the day again.
    expect(await reportOfDay(org.key)).toMatchObject({ status: 'ok' });
  });
});
