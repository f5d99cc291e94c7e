/**
 * Every HTTP request to a rail partner, recorded one by one (rail_partner_calls) and listed at
 * `GET /v1/rail-partner-calls`: Flutterwave's account resolution, payout and status check, an outage;
 * Fireblocks' payout, vault and address creation, and a request that times out, seen `sent` while it is in
 * flight (what a killed process leaves); a request whose answer the database refuses stays `sent` while the
 * payout goes on. No secret or personal data in any row; one organization never sees another's calls; the
 * list pages and filters, and its transfer filter is served by its index.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireblocksRequest } from '../src/modules/railPartners/partners/fireblocks/connection.ts';
import { listRailPartnerCalls } from '../src/modules/railPartners/repository/partnerCalls.ts';
import { type FireblocksSimulator, startFireblocksSimulator } from '../src/simulators/fireblocks/index.ts';
import {
  FLUTTERWAVE_SIMULATOR_ACCOUNTS,
  type FlutterwaveSimulator,
  startFlutterwaveSimulator,
} from '../src/simulators/flutterwave/index.ts';
import type { Queryable } from '../src/store/store.ts';
import { eventually } from './support/eventually.ts';
import { api, BACKENDS, startTestApp, type TestApp } from './support/harness.ts';
import { expectLedgerHealthy, fundedWallet } from './support/ledger.ts';
import { newOrganization, type TestOrganization } from './support/organizations.ts';
import { type PartnerCall as Call, partnerCallsOf, partnerRailWork } from './support/partnerCalls.ts';

const { resolvesAndSucceeds, staysPending } = FLUTTERWAVE_SIMULATOR_ACCOUNTS;
const PAYEE = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
/** Longer than Fireblocks' request time limit (FIREBLOCKS_REQUEST_TIMEOUT_MS, 5 s). */
const FIREBLOCKS_SLOWER_THAN_TIMEOUT_MS = 5_500;
const BVN = '22123456789';

describe.each(BACKENDS)('Rail partner calls on %s', (backend) => {
  let t: TestApp;
  let flutterwave: FlutterwaveSimulator;
  let fireblocks: FireblocksSimulator;
  let bankOrg: TestOrganization;
  let custodyOrg: TestOrganization;
  let bankPartner: string;
  let custodyPartner: string;

  beforeAll(async () => {
    t = await startTestApp(backend, 'sandbox');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    t.deps.publicUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    flutterwave = await startFlutterwaveSimulator({ processingMs: 60_000 });
    fireblocks = await startFireblocksSimulator({ stepMs: 5 });
    bankOrg = await newOrganization(t);
    const bank = await api(t, 'POST', '/v1/rail-partners', {
      key: bankOrg.key,
      body: {
        partner: 'flutterwave',
        settings: { base_url: flutterwave.url },
        credentials: {
          secret_key: flutterwave.credentials.secretKey,
          secret_hash: flutterwave.credentials.secretHash,
        },
      },
    });
    expect(bank.statusCode, bank.body).toBe(201);
    bankPartner = bank.data.id as string;
    custodyOrg = await newOrganization(t);
    const treasury = {
      fetch: (url: string, init?: object) => fetch(url, init as RequestInit),
      baseUrl: fireblocks.baseUrl,
      apiKey: fireblocks.credentials.apiKey,
      privateKey: fireblocks.credentials.secretKey,
      webhookPublicKey: fireblocks.webhookPublicKey,
      sourceVaultAccountId: '',
    };
    const vault = (
      (await fireblocksRequest(treasury, 'POST', '/vault/accounts', { name: 'treasury' })).body as {
        id: string;
      }
    ).id;
    await fireblocksRequest(treasury, 'POST', `/vault/accounts/${vault}/USDC`);
    fireblocks.setBalance(vault, 'USDC', '1000');
    const custody = await api(t, 'POST', '/v1/rail-partners', {
      key: custodyOrg.key,
      body: {
        partner: 'fireblocks',
        settings: {
          base_url: fireblocks.baseUrl,
          source_vault_account_id: vault,
          webhook_public_key: fireblocks.webhookPublicKey,
        },
        credentials: {
          api_key: fireblocks.credentials.apiKey,
          private_key: fireblocks.credentials.secretKey,
        },
      },
    });
    expect(custody.statusCode, custody.body).toBe(201);
    custodyPartner = custody.data.id as string;
  });
  afterAll(async () => {
    await flutterwave?.close();
    await fireblocks?.close();
    await t?.close();
  });

  const work = () => partnerRailWork(t);
  const callsOf = (key: string, query: string) => partnerCallsOf(t, key, query);
  async function bankPayout(accountNumber: string): Promise<string> {
    const wallet = await fundedWallet(t, '10000.00', 'KES', bankOrg.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: bankOrg.key,
      body: {
        source: wallet,
        destination: { type: 'bank_account', bank_code: '044', account_number: accountNumber },
        amount: '1500.00',
        currency: 'KES',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.data.id as string;
  }

  it('records Flutterwave’s account resolution, payout and status check, each with its references', async () => {
    const id = await bankPayout(staysPending.accountNumber);
    await work();
    await t.db.store.query('UPDATE transfers SET next_rail_check_at = $2 WHERE id = $1', [id, new Date()]);
    await work();
    const sent = flutterwave.transfers().find((transfer) => transfer.reference === id);
    expect(await callsOf(bankOrg.key, `transfer_id=${id}`)).toEqual([
      expect.objectContaining({
        object: 'rail_partner_call',
        id: expect.stringMatching(/^rpcl_/),
        rail_partner: bankPartner,
        partner: 'flutterwave',
        operation: 'account_resolve',
        method: 'POST',
        path: '/v3/accounts/resolve',
        transfer: id,
        status: 'answered',
        http_status: 200,
        duration_ms: expect.any(Number),
      }),
      expect.objectContaining({
        operation: 'payout_submit',
        path: '/v3/transfers',
        our_reference: id,
        partner_reference: String(sent?.id),
        status: 'answered',
        http_status: 200,
      }),
      expect.objectContaining({
        operation: 'payout_status',
        partner_reference: String(sent?.id),
        status: 'answered',
        http_status: 200,
        partner_code: expect.any(String),
      }),
    ]);
  });

  it('records a partner outage with its HTTP status', async () => {
    flutterwave.failNext(1, 503);
    const id = await bankPayout(resolvesAndSucceeds.accountNumber);
    await work();
    const [first] = await callsOf(bankOrg.key, `transfer_id=${id}`);
    expect(first).toMatchObject({ operation: 'account_resolve', status: 'answered', http_status: 503 });
  });

  it('records Fireblocks’ payout and each vault and address request, with the wallet they were for', async () => {
    const wallet = await fundedWallet(t, '100.000000', 'USDC', custodyOrg.key);
    const created = await api(t, 'POST', '/v1/transfers', {
      key: custodyOrg.key,
      body: {
        source: wallet,
        destination: { type: 'crypto_address', asset: 'USDC', network: 'ethereum', address: PAYEE },
        amount: '5.000000',
        currency: 'USDC',
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.data.id as string;
    await work();
    const [submit] = await callsOf(custodyOrg.key, `transfer_id=${id}`);
    expect(submit).toMatchObject({
      partner: 'fireblocks',
      operation: 'payout_submit',
      method: 'POST',
      path: '/transactions',
      our_reference: id,
      partner_reference: expect.any(String),
      status: 'answered',
      http_status: 200,
    });
    const holder = await fundedWallet(t, '0', 'USDC', custodyOrg.key);
    const issued = await api(t, 'POST', `/v1/wallets/${holder}/deposit-addresses`, {
      key: custodyOrg.key,
      body: { network: 'ethereum' },
    });
    expect(issued.statusCode, issued.body).toBe(201);
    const forWallet = (await callsOf(custodyOrg.key, `rail_partner_id=${custodyPartner}`)).filter(
      (call) => call.wallet === holder,
    );
    expect(forWallet.map((call) => call.operation)).toEqual([
      'vault_lookup',
      'vault_create',
      'asset_wallet_create',
    ]);
    expect(forWallet[1]).toMatchObject({ our_reference: expect.stringMatching(/^mkoba-/) });
    await expectLedgerHealthy(t);
  });

  it('has a request in flight `sent` (what a killed process leaves), then records its time-out', async () => {
    const holder = await fundedWallet(t, '0', 'USDC', custodyOrg.key);
    fireblocks.setLatency(FIREBLOCKS_SLOWER_THAN_TIMEOUT_MS);
    try {
      const asked = api(t, 'POST', `/v1/wallets/${holder}/deposit-addresses`, {
        key: custodyOrg.key,
        body: { network: 'ethereum' },
      });
      const inFlight = await eventually(
        () => t.db.store.query<Call>('SELECT * FROM rail_partner_calls WHERE wallet_id = $1', [holder]),
        (rows) => rows.length === 1,
      );
      expect(inFlight[0]).toMatchObject({ status: 'sent', http_status: null, duration_ms: null });
      expect((await asked).statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      fireblocks.setLatency(0);
    }
    const [call] = (
      await callsOf(custodyOrg.key, `rail_partner_id=${custodyPartner}&operation=vault_lookup`)
    ).filter((c) => c.wallet === holder);
    expect(call).toMatchObject({ status: 'timeout', failure: 'timeout', http_status: null });
  });

  it('leaves a call `sent` when its answer cannot be recorded, and the payout goes on', async () => {
    await t.db.store.exec(`
      CREATE FUNCTION test_refuse_call_answer() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END; $$;
      CREATE TRIGGER test_refuse_call_answer BEFORE UPDATE ON rail_partner_calls
        FOR EACH ROW EXECUTE FUNCTION test_refuse_call_answer();`);
    let id: string;
    try {
      id = await bankPayout(resolvesAndSucceeds.accountNumber);
      await work();
    } finally {
      await t.db.store.exec(
        'DROP TRIGGER test_refuse_call_answer ON rail_partner_calls; DROP FUNCTION test_refuse_call_answer()',
      );
    }
    const calls = await callsOf(bankOrg.key, `transfer_id=${id}`);
    expect(calls.map((call) => [call.operation, call.status])).toEqual([
      ['account_resolve', 'sent'],
      ['payout_submit', 'sent'],
    ]);
    const transfer = await api(t, 'GET', `/v1/transfers/${id}`, { key: bankOrg.key });
    expect(transfer.data.rail_reference).not.toBeNull();
  });

  it('keeps no secret or personal data in any row', async () => {
    const wallet = await fundedWallet(t, '0', 'NGN', bankOrg.key);
    const made = await api(t, 'POST', `/v1/wallets/${wallet}/virtual-account`, {
      key: bankOrg.key,
      body: { bvn: BVN, email: 'holder@example.com' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const rows = await t.db.store.query<Call>('SELECT * FROM rail_partner_calls');
    expect(rows.map((row) => row.operation)).toContain('virtual_account_create');
    const stored = JSON.stringify(rows);
    const privateKeyBody = fireblocks.credentials.secretKey.split('\n')[1] ?? 'unused';
    for (const secret of [
      flutterwave.credentials.secretKey,
      flutterwave.credentials.secretHash,
      fireblocks.credentials.apiKey,
      privateKeyBody,
      'Bearer',
      'eyJ',
      BVN,
      'holder@example.com',
      resolvesAndSucceeds.accountNumber,
      resolvesAndSucceeds.accountName,
      staysPending.accountName,
      PAYEE,
    ]) {
      expect(stored).not.toContain(secret);
    }
  });

  it('shows an organization only its own calls, and is for operators', async () => {
    const [theirs] = await callsOf(bankOrg.key, 'operation=payout_submit');
    const transfer = theirs?.transfer as string;
    expect(await callsOf(custodyOrg.key, `transfer_id=${transfer}`)).toEqual([]);
    expect(await callsOf(custodyOrg.key, `rail_partner_id=${bankPartner}`)).toEqual([]);
    const all = await callsOf(custodyOrg.key, '');
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((call) => call.rail_partner === custodyPartner)).toBe(true);
    const reader = await custodyOrg.member(['viewer']);
    const refused = await api(t, 'GET', '/v1/rail-partner-calls', { key: reader.key });
    expect(refused.statusCode).toBe(403);
  });

  it('pages newest first with a cursor, and filters by operation and created range', async () => {
    const first = await api(t, 'GET', '/v1/rail-partner-calls?limit=2', { key: bankOrg.key });
    expect(first.data).toMatchObject({ object: 'list', has_more: true });
    const [, last] = first.data.data as Call[];
    const next = await api(t, 'GET', `/v1/rail-partner-calls?limit=2&starting_after=${last?.id}`, {
      key: bankOrg.key,
    });
    const nextIds = (next.data.data as Call[]).map((call) => call.id as string);
    expect(nextIds.every((callId) => callId < (last?.id as string))).toBe(true);
    const submits = await callsOf(bankOrg.key, 'operation=payout_submit');
    expect(submits.length).toBeGreaterThan(0);
    expect(submits.every((call) => call.operation === 'payout_submit')).toBe(true);
    const later = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    expect(await callsOf(bankOrg.key, `created[gte]=${later}`)).toEqual([]);
    const typo = await api(t, 'GET', '/v1/rail-partner-calls?operation=payout', { key: bankOrg.key });
    expect(typo.statusCode).toBe(400);
  });

  it.each([
    [{ transferId: 'tr_x' }, 'rail_partner_calls_transfer_idx'],
    [{ railPartnerId: 'rp_x' }, 'rail_partner_calls_partner_idx'],
    [{ operation: 'payout_submit' as const }, 'rail_partner_calls_operation_idx'],
    [{ createdGte: new Date(Date.now() - 86_400_000) }, 'rail_partner_calls_organization_idx'],
  ])('reads history filtered by %o through %s', async (filter, index) => {
    const statements: { sql: string; params: unknown[] }[] = [];
    // The repository's own statement, caught on its way to the database.
    const recorder: Queryable = {
      query: async <R>(sql: string, params?: readonly unknown[]) => {
        statements.push({ sql, params: [...(params ?? [])] });
        return [] as R[];
      },
      exec: async () => {},
    };
    await listRailPartnerCalls(recorder, bankOrg.organizationId, filter, 21);
    const [statement] = statements;
    const plan = await t.db.store.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<Record<string, string>>(`EXPLAIN ${statement?.sql}`, statement?.params);
    });
    expect(plan.map((row) => Object.values(row)[0]).join('\n')).toContain(index);
  });
});
